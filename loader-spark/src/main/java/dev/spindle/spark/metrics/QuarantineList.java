package dev.spindle.spark.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Every quarantined sample of a job, on the driver: the report's {@code quarantine} lists the first
 * {@link #REPORTED}, {@link JobReport#write} writes all of them as JSON lines next to the report
 * ({@code REPORT.quarantine.jsonl}), so the report stays small however many samples were
 * quarantined and none goes unlisted. The report carries {@code quarantine_total} and {@code
 * quarantine_truncated}. The records stay in memory: the driver has received every one of them from
 * its tasks anyway (each is a few hundred bytes, and their number is bounded by the failure
 * budget). Both list the records in dataset order, whatever order the tasks' threads met them in,
 * so that two runs over the same input report the same list: by index, then those whose index is
 * unknown (a shard's unreadable rest) by shard and key. Driver thread.
 */
public final class QuarantineList {
  public static final int REPORTED = 100;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Dataset order: known indices first, ascending; then the unknown ones by shard, key, reason. */
  private static final Comparator<QuarantineRecord> ORDER =
      Comparator.comparing((QuarantineRecord q) -> q.index() < 0)
          .thenComparingLong(QuarantineRecord::index)
          .thenComparing(QuarantineRecord::shard, Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(QuarantineRecord::key, Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(
              QuarantineRecord::reason, Comparator.nullsFirst(Comparator.naturalOrder()));

  private final List<QuarantineRecord> records = new ArrayList<>();
  private boolean sorted = true;

  public void add(QuarantineRecord record) {
    records.add(record);
    sorted = false;
  }

  public void addAll(Iterable<QuarantineRecord> all) {
    all.forEach(this::add);
  }

  public long total() {
    return records.size();
  }

  /** The first {@link #REPORTED} records, in dataset order. */
  public List<QuarantineRecord> first() {
    sort();
    return List.copyOf(records.subList(0, Math.min(REPORTED, records.size())));
  }

  /**
   * Puts {@code quarantine}, {@code quarantine_total}, {@code quarantine_truncated} in the report.
   */
  public JobReport putInto(JobReport report) {
    List<Map<String, Object>> listed = new ArrayList<>();
    first().forEach(q -> listed.add(q.toReport()));
    return report
        .put("quarantine", listed)
        .put("quarantine_total", total())
        .put("quarantine_truncated", total() > listed.size())
        .attach(this);
  }

  /** Writes every record as JSON lines to {@code file}; false (nothing written) when none. */
  boolean writeTo(Path file) throws IOException {
    if (records.isEmpty()) {
      return false;
    }
    sort();
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (QuarantineRecord q : records) {
        out.write(JSON.writeValueAsString(q.toReport()));
        out.write('\n');
      }
    }
    return true;
  }

  private void sort() {
    if (!sorted) {
      records.sort(ORDER);
      sorted = true;
    }
  }
}
