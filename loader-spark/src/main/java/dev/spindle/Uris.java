package dev.spindle;

/** Argument checks shared by the builders; messages name the builder method. */
final class Uris {
  private Uris() {}

  static String require(String what, String uri) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException(
          "Invalid " + what + ": '" + uri + "' (must be a URI" + " or path)");
    }
    return uri.trim();
  }

  static void present(String what, String value, String job) {
    if (value == null) {
      throw new IllegalArgumentException(job + " needs " + what + "(...) before run()");
    }
  }
}
