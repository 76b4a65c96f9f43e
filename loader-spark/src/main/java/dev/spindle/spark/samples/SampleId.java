package dev.spindle.spark.samples;

import dev.spindle.spark.metrics.QuarantineRecord;

/**
 * The key a sample carries through the pipeline, {@code "<shard> [<key>] #<index>"}: readable in
 * logs and quarantine lists, and parsed back (from the right) into shard, key and index for reports
 * and quarantine files. Stateless; any thread.
 */
final class SampleId {
  private SampleId() {}

  public static String of(String shard, String key, long index) {
    return shard + " [" + key + "] #" + index;
  }

  /** A quarantine record for the sample {@code id} names; an id of another form keeps it whole. */
  public static QuarantineRecord record(String id, String reason) {
    int hash = id.lastIndexOf("] #");
    int open = hash < 0 ? -1 : id.lastIndexOf(" [", hash);
    if (open < 0) {
      return new QuarantineRecord(id, "", -1, reason);
    }
    try {
      long index = Long.parseLong(id.substring(hash + 3));
      return new QuarantineRecord(
          id.substring(0, open), id.substring(open + 2, hash), index, reason);
    } catch (NumberFormatException e) {
      return new QuarantineRecord(id, "", -1, reason);
    }
  }
}
