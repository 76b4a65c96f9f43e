package dev.spindle.gpu.bridge;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which plan a loader state ({@code spindle-loader-state/1} JSON) counts batches of: every field of
 * the state except the current leg's {@code batchesConsumed}, one {@code name=value} line per field
 * of {@link #FIELDS}, in that order. A trainer's HELLO carries the identity of the state it resumes
 * from (the Python client derives it the same way, see PROTOCOL.md "Plan identity"); the bridge
 * compares it with the identity of the state its rank is served from, so a batch count of another
 * seed, epoch, batch size, world size or leg is never applied to this sequence.
 *
 * <p>Values: a string as it is, an integer in decimal, anything else (missing, null, a fraction, an
 * object) empty; {@code earlierLegs} is {@code worldSize:c0,c1,…} per leg, legs joined by {@code
 * ;}. Stateless; any thread.
 */
final class PlanIdentity {
  /** The fields compared, in the order of the identity's lines. */
  static final List<String> FIELDS =
      List.of(
          "format",
          "manifest.sha256",
          "seed",
          "epoch",
          "batchSize",
          "remainder",
          "shuffleWindow",
          "worldSize",
          "earlierLegs");

  private static final ObjectMapper JSON = new ObjectMapper();

  private PlanIdentity() {}

  /**
   * The identity of {@code loaderState}; "" for "" (no state: nothing to compare).
   *
   * @throws IllegalArgumentException if it is not a JSON object
   */
  static String of(String loaderState) {
    if (loaderState.isEmpty()) {
      return "";
    }
    JsonNode root;
    try {
      root = JSON.readTree(loaderState);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "Invalid loader state: not JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("Invalid loader state: not a JSON object");
    }
    StringBuilder b = new StringBuilder();
    for (String f : FIELDS) {
      String v =
          switch (f) {
            case "manifest.sha256" -> value(root.path("manifest").get("sha256"));
            case "earlierLegs" -> legs(root.get("earlierLegs"));
            default -> value(root.get(f));
          };
      b.append(b.length() == 0 ? "" : "\n").append(f).append('=').append(v);
    }
    return b.toString();
  }

  /**
   * The fields whose values differ between {@code served} and {@code stated} (identities), each as
   * {@code name: state 'x', feed 'y'} (values abbreviated, see {@link PeerText}).
   */
  static List<String> differences(String served, String stated) {
    Map<String, String> feed = fields(served);
    Map<String, String> state = fields(stated);
    Map<String, String> all = new LinkedHashMap<>(feed);
    state.keySet().forEach(k -> all.putIfAbsent(k, null));
    List<String> out = new ArrayList<>();
    for (String name : all.keySet()) {
      String f = feed.getOrDefault(name, "");
      String s = state.getOrDefault(name, "");
      if (!f.equals(s)) {
        out.add(
            PeerText.quote(name) + ": state " + PeerText.quote(s) + ", feed " + PeerText.quote(f));
      }
    }
    return out;
  }

  private static Map<String, String> fields(String identity) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String line : identity.isEmpty() ? new String[0] : identity.split("\n", -1)) {
      int eq = line.indexOf('=');
      m.putIfAbsent(eq < 0 ? line : line.substring(0, eq), eq < 0 ? "" : line.substring(eq + 1));
    }
    return m;
  }

  private static String legs(JsonNode legs) {
    if (legs == null || !legs.isArray()) {
      return "";
    }
    List<String> out = new ArrayList<>();
    for (JsonNode leg : legs) {
      List<String> consumed = new ArrayList<>();
      JsonNode c = leg.get("batchesConsumed");
      if (c != null && c.isArray()) {
        c.forEach(n -> consumed.add(value(n)));
      }
      out.add(value(leg.get("worldSize")) + ":" + String.join(",", consumed));
    }
    return String.join(";", out);
  }

  private static String value(JsonNode n) {
    if (n == null) {
      return "";
    }
    return n.isTextual()
        ? n.textValue()
        : n.isIntegralNumber() ? n.bigIntegerValue().toString() : "";
  }
}
