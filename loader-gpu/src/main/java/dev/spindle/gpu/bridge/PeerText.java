package dev.spindle.gpu.bridge;

/**
 * Strings a peer sent, made safe to put in logs and ERROR messages: quoted, control characters
 * escaped, cut after {@link #SHOWN} characters with the full length named. A peer controls these
 * strings and may send a megabyte of them; nothing it sends reaches a log unabridged. Stateless;
 * any thread.
 */
final class PeerText {
  /** Characters of a peer string shown; 64 shows a SHA-256 in hex whole. */
  static final int SHOWN = 64;

  private PeerText() {}

  /** {@code 'text'}, or {@code 'first 64 chars…' (N chars)}; "(none)" for null. */
  static String quote(String s) {
    if (s == null) {
      return "(none)";
    }
    int shown = Math.min(s.length(), SHOWN);
    StringBuilder b = new StringBuilder(shown + 24).append('\'');
    for (int i = 0; i < shown; i++) {
      escape(b, s.charAt(i));
    }
    b.append(s.length() > SHOWN ? "…'" : "'");
    return s.length() > SHOWN
        ? b.append(" (").append(s.length()).append(" chars)").toString()
        : b.toString();
  }

  private static void escape(StringBuilder b, char c) {
    switch (c) {
      case '\n' -> b.append("\\n");
      case '\r' -> b.append("\\r");
      case '\t' -> b.append("\\t");
      case '\\' -> b.append("\\\\");
      case '\'' -> b.append("\\'");
      default -> {
        if (Character.isISOControl(c) || Character.getType(c) == Character.FORMAT) {
          b.append(String.format("\\u%04x", (int) c));
        } else {
          b.append(c);
        }
      }
    }
  }
}
