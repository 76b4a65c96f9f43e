package dev.spindle.spark.sql;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.metrics.QuarantineRecord;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The quarantine list of one partition of a scan, as JSON lines ({@code shard}, {@code key}, {@code
 * index}, {@code reason}; {@code spark.read.json(uri)} reads them all) in {@code
 * <uri>/part-<partition>-<scan>.json}. Written when a task has read its partition to the end, and
 * only if it quarantined something: first to a hidden file named for the task attempt, then
 * renamed, so a retried or speculative attempt replaces the file (with the same list) instead of
 * adding a second one. Stateless; task threads.
 */
final class QuarantineFiles {
  private static final ObjectMapper JSON = new ObjectMapper();

  private QuarantineFiles() {}

  static Path file(String uri, String scanId, int partition) {
    return new Path(uri, String.format("part-%05d-%s.json", partition, scanId));
  }

  static void write(
      String uri,
      String scanId,
      int partition,
      long attempt,
      List<QuarantineRecord> records,
      Configuration conf)
      throws IOException {
    Path target = file(uri, scanId, partition);
    Path temp = new Path(uri, "." + target.getName() + ".attempt-" + attempt);
    FileSystem fs = target.getFileSystem(conf);
    try {
      fs.mkdirs(target.getParent());
      try (BufferedWriter out =
          new BufferedWriter(
              new OutputStreamWriter(fs.create(temp, true), StandardCharsets.UTF_8))) {
        for (QuarantineRecord q : records) {
          out.write(JSON.writeValueAsString(q.toReport()));
          out.write('\n');
        }
      }
      if (!fs.rename(temp, target)) {
        if (!fs.exists(target)) {
          throw new IOException("rename of " + temp + " failed");
        }
        fs.delete(temp, false); // another attempt of this partition wrote the same list
      }
    } catch (IOException e) {
      throw new IOException(
          "Cannot write the quarantine list " + target + ": " + e.getMessage(), e);
    }
  }
}
