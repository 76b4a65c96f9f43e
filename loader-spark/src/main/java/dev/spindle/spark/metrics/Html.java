package dev.spindle.spark.metrics;

/** Escaping for text that goes into an HTML page: element text, attribute values, inline JSON. */
final class Html {
  private Html() {}

  /** {@code s} as HTML text or a quoted attribute value; null as the empty string. */
  static String text(Object s) {
    if (s == null) {
      return "";
    }
    String in = s.toString();
    StringBuilder out = new StringBuilder(in.length() + 16);
    for (int i = 0; i < in.length(); i++) {
      char c = in.charAt(i);
      switch (c) {
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '&' -> out.append("&amp;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&#39;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }

  /**
   * JSON made safe inside a {@code <script>} element: the characters that could close the element
   * or start a comment only occur inside JSON strings, where their {@code \\u} escapes mean the
   * same.
   */
  static String scriptJson(String json) {
    return json.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029");
  }
}
