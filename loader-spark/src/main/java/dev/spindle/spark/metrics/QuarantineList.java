package dev.spindle.spark.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Every quarantined sample of a job, on the driver: the first {@link #REPORTED} in memory for the
 * report's {@code quarantine}, all of them as JSON lines in a spill file that {@link
 * JobReport#write} keeps next to the report ({@code REPORT.quarantine.jsonl}), so the report stays
 * small however many samples were quarantined and none goes unlisted. The report carries {@code
 * quarantine_total} and {@code quarantine_truncated}. Driver thread; the spill file is deleted
 * when the JVM exits unless the report took it.
 */
public final class QuarantineList {
  public static final int REPORTED = 100;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<QuarantineRecord> first = new ArrayList<>();
  private Path spill;
  private long total;

  /** Adds one record (in the order the job wants them listed). */
  public void add(QuarantineRecord record) {
    if (first.size() < REPORTED) {
      first.add(record);
    }
    try {
      if (spill == null) {
        spill = Files.createTempFile("spindle-quarantine-", ".jsonl");
        spill.toFile().deleteOnExit();
      }
      // no handle stays open: quarantined samples are few, a job's lifetime long
      Files.writeString(spill, JSON.writeValueAsString(record.toReport()) + "\n",
          StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot spill the quarantine list to " + spill, e);
    }
    total++;
  }

  public void addAll(Iterable<QuarantineRecord> records) {
    records.forEach(this::add);
  }

  public long total() {
    return total;
  }

  /** The first {@link #REPORTED} records. */
  public List<QuarantineRecord> first() {
    return List.copyOf(first);
  }

  /** Puts {@code quarantine}, {@code quarantine_total}, {@code quarantine_truncated} in the report. */
  public JobReport putInto(JobReport report) {
    List<Map<String, Object>> listed = new ArrayList<>();
    first.forEach(q -> listed.add(q.toReport()));
    return report.put("quarantine", listed)
        .put("quarantine_total", total)
        .put("quarantine_truncated", total > first.size())
        .attach(this);
  }

  /** Writes every record as JSON lines to {@code file}; false when there is none. */
  boolean writeTo(Path file) throws IOException {
    if (total == 0) {
      return false;
    }
    Files.copy(spill, file, StandardCopyOption.REPLACE_EXISTING);
    return true;
  }
}
