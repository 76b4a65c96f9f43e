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
  private QuarantineList quarantine;

  public JobReport(String command) {
    fields.put("command", command);
  }

  public JobReport put(String key, Object value) {
    fields.put(key, value);
    return this;
  }

  /** The job's full quarantine list, written next to the report by {@link #write}. */
  JobReport attach(QuarantineList list) {
    this.quarantine = list;
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

  /**
   * Writes the report; parent folders are created. When samples were quarantined, every one of them
   * is listed in {@code REPORT.quarantine.jsonl} beside it (named in {@code quarantine_file}); the
   * report itself lists the first {@link QuarantineList#REPORTED}. A report written without a
   * {@code status} is a finished job's: {@code "status": "ok"} (a command that fails writes {@code
   * failed} or {@code interrupted} with the {@code error}).
   */
  public void write(Path file) throws IOException {
    fields.putIfAbsent("status", "ok");
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    if (quarantine != null) {
      Path list = quarantineFile(file);
      fields.put("quarantine_file", quarantine.writeTo(list) ? list.toString() : null);
    }
    Files.writeString(file, toJson() + "\n");
  }

  /**
   * Where {@link #write} lists every quarantined sample: {@code r.json} → {@code
   * r.quarantine.jsonl}.
   */
  public static Path quarantineFile(Path report) {
    String name = report.getFileName().toString();
    String stem = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
    return report.resolveSibling(stem + ".quarantine.jsonl");
  }

  /** Reads a report written by {@link #write}. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> read(Path file) throws IOException {
    return JSON.readValue(file.toFile(), Map.class);
  }
}
