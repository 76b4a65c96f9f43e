package dev.spindle.gpu.feed;

import java.util.Locale;

/**
 * A minimal JSON object writer (loader-gpu has no Jackson): strings escaped per RFC 8259,
 * non-finite numbers written as null. Single-threaded; build one document per instance.
 */
final class Json {
  private final StringBuilder out = new StringBuilder("{");
  private boolean first = true;

  Json field(String name, String value) {
    key(name);
    out.append(value == null ? "null" : quote(value));
    return this;
  }

  Json field(String name, long value) {
    key(name);
    out.append(value);
    return this;
  }

  Json field(String name, double value) {
    key(name);
    out.append(Double.isFinite(value) ? String.format(Locale.ROOT, "%.6g", value) : "null");
    return this;
  }

  /** Writes {@code rawJson} (already valid JSON) as the value. */
  Json raw(String name, String rawJson) {
    key(name);
    out.append(rawJson);
    return this;
  }

  String build() {
    return out + "}";
  }

  private void key(String name) {
    out.append(first ? "" : ",").append(quote(name)).append(':');
    first = false;
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
