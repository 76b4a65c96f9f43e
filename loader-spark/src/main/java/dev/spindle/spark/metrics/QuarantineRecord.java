package dev.spindle.spark.metrics;

import java.io.Serializable;

/**
 * A sample that was skipped, and why. Listed in job reports; never silently dropped.
 *
 * @param shard the shard it came from
 * @param key its key inside the shard
 * @param index its dataset (or plan) index, or -1 when unknown
 * @param reason what was wrong, in words a user can act on
 */
public record QuarantineRecord(String shard, String key, long index, String reason)
    implements Serializable {

  /** The record as a JSON report lists it: shard, key, index, reason. */
  public java.util.Map<String, Object> toReport() {
    java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("shard", shard);
    m.put("key", key);
    m.put("index", index);
    m.put("reason", reason);
    return m;
  }

  /** One line for logs and error messages. */
  public String describe() {
    return shard + " [" + key + "]: " + reason;
  }
}
