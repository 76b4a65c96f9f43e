package dev.spindle.spark.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Every quarantined sample of a job, on the driver: the report's {@code quarantine} lists the
 * first {@link #REPORTED}, {@link JobReport#write} writes all of them as JSON lines next to the
 * report ({@code REPORT.quarantine.jsonl}), so the report stays small however many samples were
 * quarantined and none goes unlisted. The report carries {@code quarantine_total} and {@code
 * quarantine_truncated}. The records stay in memory: the driver has received every one of them
 * from its tasks anyway (each is a few hundred bytes, and their number is bounded by the failure
 * budget). Driver thread.
 */
public final class QuarantineList {
  public static final int REPORTED = 100;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<QuarantineRecord> records = new ArrayList<>();

  /** Adds one record (in the order the job wants them listed). */
  public void add(QuarantineRecord record) {
    records.add(record);
  }

  public void addAll(Iterable<QuarantineRecord> all) {
    all.forEach(this::add);
  }

  public long total() {
    return records.size();
  }

  /** The first {@link #REPORTED} records. */
  public List<QuarantineRecord> first() {
    return List.copyOf(records.subList(0, Math.min(REPORTED, records.size())));
  }

  /** Puts {@code quarantine}, {@code quarantine_total}, {@code quarantine_truncated} in the report. */
  public JobReport putInto(JobReport report) {
    List<Map<String, Object>> listed = new ArrayList<>();
    first().forEach(q -> listed.add(q.toReport()));
    return report.put("quarantine", listed)
        .put("quarantine_total", total())
        .put("quarantine_truncated", total() > listed.size())
        .attach(this);
  }

  /** Writes every record as JSON lines to {@code file}; false (nothing written) when none. */
  boolean writeTo(Path file) throws IOException {
    if (records.isEmpty()) {
      return false;
    }
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (QuarantineRecord q : records) {
        out.write(JSON.writeValueAsString(q.toReport()));
        out.write('\n');
      }
    }
    return true;
  }
}
