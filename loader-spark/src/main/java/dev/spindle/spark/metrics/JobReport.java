package dev.spindle.spark.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The JSON report a job writes at its end ({@code --report FILE}) and the one-line summary it
 * prints. Fields keep insertion order. One thread.
 */
public final class JobReport {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final Map<String, Object> fields = new LinkedHashMap<>();

  public JobReport(String command) {
    fields.put("command", command);
  }

  public JobReport put(String key, Object value) {
    fields.put(key, value);
    return this;
  }

  public Object get(String key) {
    return fields.get(key);
  }

  public Map<String, Object> fields() {
    return fields;
  }

  public String toJson() {
    try {
      return JSON.writeValueAsString(fields);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot serialise report: " + e.getMessage(), e);
    }
  }

  /** Writes the report; parent folders are created. */
  public void write(Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, toJson() + "\n");
  }

  /** Reads a report written by {@link #write}. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> read(Path file) throws IOException {
    return JSON.readValue(file.toFile(), Map.class);
  }
}
