package dev.spindle.spark.shard;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.batch.FieldType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * Turns a tar member's bytes into the value of a declared field, as its type holds it: {@code
 * int32} an {@link Integer}, {@code int64} a {@link Long}, {@code float32} a {@link Float}, {@code
 * float64} a {@link Double} (numbers written as text, as WebDataset's {@code .cls}: surrounding
 * blanks allowed), {@code string} a {@link String} (strict UTF-8; a {@code json} member must also
 * be one JSON document), {@code bytes} the {@code byte[]} itself, {@code list<int32>} an {@code
 * int[]}, {@code list<int64>} a {@code long[]}, {@code list<float32>} a {@code float[]} (from a
 * JSON array of numbers). A value that does not parse, or a variable-width one over its byte bound,
 * is an {@link IllegalArgumentException} whose message is the reason its sample is quarantined.
 * Stateless; any thread.
 */
final class FieldValues {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** A decimal number as Python's {@code float()} reads one (no hexadecimal, no Java suffixes). */
  private static final Pattern FLOAT =
      Pattern.compile(
          "[-+]?((\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?|nan|inf|infinity)",
          Pattern.CASE_INSENSITIVE);

  private static final Pattern INTEGER = Pattern.compile("[-+]?\\d{1,19}");

  private FieldValues() {}

  /**
   * The value of {@code field} held by {@code bytes}, read from {@code where} (the member's name).
   *
   * @param maxBytes the bound on a string, bytes or list value ({@code
   *     spark.spindle.fields.maxBytes})
   * @throws IllegalArgumentException naming the field, where and why
   */
  static Object parse(FieldSpec field, byte[] bytes, String where, int maxBytes) {
    try {
      return value(field, bytes, maxBytes);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "field '" + field.name() + "' (" + field.type() + ") in " + where + ": " + e.getMessage(),
          e);
    }
  }

  private static Object value(FieldSpec field, byte[] bytes, int maxBytes) {
    FieldType type = field.type();
    return switch (type) {
      case INT32 -> (int) integer(bytes, Integer.MIN_VALUE, Integer.MAX_VALUE);
      case INT64 -> integer(bytes, Long.MIN_VALUE, Long.MAX_VALUE);
      case FLOAT32 -> (float) floating(bytes);
      case FLOAT64 -> floating(bytes);
      case STRING -> string(bounded(bytes, maxBytes), field.json());
      case BYTES -> bounded(bytes, maxBytes);
      case LIST_INT32, LIST_INT64, LIST_FLOAT32 -> list(type, bytes, maxBytes);
      case IMAGE -> throw new IllegalStateException("The image is read as the image column");
    };
  }

  private static byte[] bounded(byte[] bytes, int maxBytes) {
    if (bytes.length > maxBytes) {
      throw new IllegalArgumentException(
          bytes.length + " bytes, over spark.spindle.fields.maxBytes=" + maxBytes);
    }
    return bytes;
  }

  private static long integer(byte[] bytes, long min, long max) {
    String text = utf8(bytes).strip();
    if (INTEGER.matcher(text).matches()) {
      try {
        long v = Long.parseLong(text);
        if (v >= min && v <= max) {
          return v;
        }
      } catch (NumberFormatException e) {
        // out of range: said below
      }
      throw new IllegalArgumentException(quote(text) + " is outside [" + min + ", " + max + "]");
    }
    throw new IllegalArgumentException(quote(text) + " is not an integer");
  }

  private static double floating(byte[] bytes) {
    String text = utf8(bytes).strip();
    if (!FLOAT.matcher(text).matches()) {
      throw new IllegalArgumentException(quote(text) + " is not a number");
    }
    String t = text.toLowerCase(java.util.Locale.ROOT).replace("infinity", "inf");
    return switch (t.replace("+", "")) {
      case "nan", "-nan" -> Double.NaN;
      case "inf" -> Double.POSITIVE_INFINITY;
      case "-inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(text);
    };
  }

  private static String string(byte[] bytes, boolean json) {
    String text = utf8(bytes);
    if (json) {
      tree(bytes);
    }
    return text;
  }

  private static Object list(FieldType type, byte[] bytes, int maxBytes) {
    JsonNode node = tree(bytes);
    if (!node.isArray()) {
      throw new IllegalArgumentException(
          "not a JSON array but " + node.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
    }
    long size = (long) node.size() * type.width();
    if (size > maxBytes) {
      throw new IllegalArgumentException(
          node.size()
              + " elements ("
              + size
              + " bytes), over spark.spindle.fields.maxBytes="
              + maxBytes);
    }
    return switch (type) {
      case LIST_INT32 -> ints(node);
      case LIST_INT64 -> longs(node);
      default -> floats(node);
    };
  }

  private static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode n = array.get(i);
      if (!n.isIntegralNumber() || !n.canConvertToInt()) {
        throw element(i, n, "an int32");
      }
      out[i] = n.intValue();
    }
    return out;
  }

  private static long[] longs(JsonNode array) {
    long[] out = new long[array.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode n = array.get(i);
      if (!n.isIntegralNumber() || !n.canConvertToLong()) {
        throw element(i, n, "an int64");
      }
      out[i] = n.longValue();
    }
    return out;
  }

  private static float[] floats(JsonNode array) {
    float[] out = new float[array.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode n = array.get(i);
      if (!n.isNumber()) {
        throw element(i, n, "a number");
      }
      out[i] = n.floatValue();
    }
    return out;
  }

  private static IllegalArgumentException element(int i, JsonNode n, String wanted) {
    return new IllegalArgumentException(
        "element " + i + " (" + quote(n.toString()) + ") is not " + wanted);
  }

  private static JsonNode tree(byte[] bytes) {
    try {
      JsonNode node = JSON.readTree(bytes);
      if (node == null || node.isMissingNode()) {
        throw new IllegalArgumentException("not JSON: the value is empty");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new IllegalArgumentException("not valid JSON: " + e.getMessage());
    }
  }

  private static String utf8(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("not valid UTF-8 text");
    }
  }

  private static String quote(String text) {
    return "'" + LabelRule.abbreviate(text) + "'";
  }
}
