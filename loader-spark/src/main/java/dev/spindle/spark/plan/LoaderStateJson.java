package dev.spindle.spark.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spindle.spark.manifest.ManifestFingerprint;
import java.util.ArrayList;
import java.util.List;

/** The JSON form of {@link LoaderState}; the format is in the package documentation. */
final class LoaderStateJson {
  static final String FORMAT = "spindle-loader-state/1";
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private LoaderStateJson() {}

  static String write(LoaderState state) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("format", FORMAT);
    ObjectNode manifest = root.putObject("manifest");
    manifest.put("sha256", state.manifest().sha256());
    manifest.put("shards", state.manifest().shards());
    manifest.put("samples", state.manifest().samples());
    root.put("seed", state.seed());
    root.put("epoch", state.epoch());
    root.put("batchSize", state.batchSize());
    root.put("remainder", state.remainder().name());
    root.put("shuffleWindow", state.shuffleWindow());
    writeLeg(root, state.current());
    ArrayNode earlier = root.putArray("earlierLegs");
    for (LoaderState.Leg leg : state.legs().subList(0, state.legs().size() - 1)) {
      writeLeg(earlier.addObject(), leg);
    }
    if (state.mixture() != null) {
      writeMixture(root.putObject("mix"), state.mixture());
    }
    if (state.budget() != null) {
      ObjectNode budget = root.putObject("batchTokens");
      budget.put("field", state.budget().field());
      budget.put("tokens", state.budget().tokens());
    }
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write loader state", e);
    }
  }

  static LoaderState read(String json) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "Invalid loader state: not JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("Invalid loader state: not a JSON object");
    }
    String format = text(root, "format");
    if (!FORMAT.equals(format)) {
      throw new IllegalArgumentException(
          "Invalid loader state: format \"" + format + "\" (expected \"" + FORMAT + "\")");
    }
    JsonNode m = field(root, "manifest");
    ManifestFingerprint manifest =
        new ManifestFingerprint(text(m, "sha256"), integer(m, "shards"), number(m, "samples"));
    List<LoaderState.Leg> legs = new ArrayList<>();
    for (JsonNode leg : field(root, "earlierLegs")) {
      legs.add(readLeg(leg));
    }
    legs.add(readLeg(root));
    return new LoaderState(
        manifest,
        number(root, "seed"),
        integer(root, "epoch"),
        integer(root, "batchSize"),
        remainder(text(root, "remainder")),
        integer(root, "shuffleWindow"),
        legs,
        root.hasNonNull("mix") ? readMixture(root.get("mix")) : null,
        root.hasNonNull("batchTokens") ? readBudget(root.get("batchTokens")) : null);
  }

  /** A budget without lengths: the job attaches its own ({@link LoaderState#withBudget}). */
  private static TokenBudget readBudget(JsonNode node) {
    int tokens = integer(node, "tokens");
    if (tokens < 1) {
      throw new IllegalArgumentException(
          "Invalid loader state: \"batchTokens.tokens\" is " + tokens + " (must be >= 1)");
    }
    return TokenBudget.of(text(node, "field"), tokens);
  }

  private static void writeMixture(ObjectNode node, Mixture mix) {
    ArrayNode sources = node.putArray("sources");
    long[] weights = mix.weights();
    for (int s = 0; s < mix.sources(); s++) {
      ObjectNode source = sources.addObject();
      source.put("name", mix.names().get(s));
      source.put("weight", weights[s]);
      source.put("shards", mix.endShard(s) - mix.firstShard(s));
    }
    node.put("samples", mix.samples());
  }

  private static Mixture readMixture(JsonNode node) {
    JsonNode sources = field(node, "sources");
    if (!sources.isArray() || sources.isEmpty()) {
      throw new IllegalArgumentException("Invalid loader state: \"mix.sources\" is not a list");
    }
    List<String> names = new ArrayList<>();
    long[] weights = new long[sources.size()];
    int[] ends = new int[sources.size()];
    for (int s = 0; s < weights.length; s++) {
      JsonNode source = sources.get(s);
      names.add(text(source, "name"));
      weights[s] = number(source, "weight");
      ends[s] = (s == 0 ? 0 : ends[s - 1]) + integer(source, "shards");
      if (weights[s] < 1) {
        throw new IllegalArgumentException(
            "Invalid loader state: \"weight\" of source " + names.get(s) + " must be >= 1");
      }
    }
    return new Mixture(names, weights, ends, number(node, "samples"));
  }

  private static void writeLeg(ObjectNode node, LoaderState.Leg leg) {
    node.put("worldSize", leg.worldSize());
    ArrayNode consumed = node.putArray("batchesConsumed");
    for (int c : leg.batchesConsumed()) {
      consumed.add(c);
    }
  }

  private static LoaderState.Leg readLeg(JsonNode node) {
    JsonNode array = field(node, "batchesConsumed");
    if (!array.isArray()) {
      throw new IllegalArgumentException("Invalid loader state: \"batchesConsumed\" is not a list");
    }
    int[] consumed = new int[array.size()];
    for (int r = 0; r < consumed.length; r++) {
      consumed[r] = asInt("batchesConsumed[" + r + "]", array.get(r));
    }
    return new LoaderState.Leg(integer(node, "worldSize"), consumed);
  }

  private static JsonNode field(JsonNode node, String name) {
    JsonNode value = node.get(name);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("Invalid loader state: field \"" + name + "\" missing");
    }
    return value;
  }

  private static String text(JsonNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isTextual()) {
      throw new IllegalArgumentException(
          "Invalid loader state: \"" + name + "\" is " + value + " (must be a string)");
    }
    return value.asText();
  }

  private static long number(JsonNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException(
          "Invalid loader state: \"" + name + "\" is " + value + " (must be a whole number)");
    }
    return value.longValue();
  }

  private static int integer(JsonNode node, String name) {
    return asInt(name, field(node, name));
  }

  private static int asInt(String name, JsonNode value) {
    if (!value.isIntegralNumber() || !value.canConvertToInt()) {
      throw new IllegalArgumentException(
          "Invalid loader state: \""
              + name
              + "\" is "
              + value
              + " (must be a whole number in int range)");
    }
    return value.intValue();
  }

  private static Remainder remainder(String name) {
    try {
      return Remainder.valueOf(name);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid loader state: \"remainder\" is \""
              + name
              + "\" (must be one of DROP_LAST, PAD, EXACT)",
          e);
    }
  }
}
