package dev.spindle.spark.sink;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The content of {@code _spindle_lock.json}: who holds the output ({@link OutputLock.Holder}) and
 * its lease, {@code heartbeat_ms} (the holder's clock when it last renewed the lock) and {@code
 * lease_ms} (how long it promises never to go without renewing). Locks written before the lease
 * have neither: their file's modification time stands for the heartbeat. Stateless; any thread.
 */
final class LockFile {
  private static final ObjectMapper JSON = new ObjectMapper();

  private LockFile() {}

  /**
   * A lock file as found.
   *
   * @param holder who holds it, or null when it cannot be read
   * @param heartbeatMs its last renewal on the holder's clock, or 0 when it records none
   * @param leaseMs the holder's lease, or 0 when it records none
   * @param modifiedMs the file's modification time
   * @param bytes its content, to tell whether it changed since
   */
  record Found(
      OutputLock.Holder holder, long heartbeatMs, long leaseMs, long modifiedMs, byte[] bytes) {
    /** The latest sign of life: the later of the heartbeat and the file's modification time. */
    long lastRenewalMs() {
      return Math.max(heartbeatMs, modifiedMs);
    }

    boolean heldBy(String job) {
      return holder != null && holder.job().equals(job);
    }

    /** The same file content and modification time: nobody wrote it in between. */
    boolean sameAs(Found other) {
      return other != null && modifiedMs == other.modifiedMs && Arrays.equals(bytes, other.bytes);
    }
  }

  /** The lock's bytes for {@code holder}, renewed now, promising renewal within {@code leaseMs}. */
  static byte[] encode(OutputLock.Holder holder, long leaseMs) throws IOException {
    long now = System.currentTimeMillis();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job", holder.job());
    m.put("description", holder.description());
    m.put("user", holder.user());
    m.put("host", holder.host());
    m.put("pid", holder.pid());
    m.put("process_start_ms", holder.processStartMs());
    m.put("started", holder.started());
    m.put("boot_id", holder.bootId());
    m.put("pid_namespace", holder.pidNamespace());
    m.put("heartbeat", Instant.ofEpochMilli(now).toString());
    m.put("heartbeat_ms", now);
    m.put("lease_ms", leaseMs);
    return JSON.writeValueAsBytes(m);
  }

  /** The lock at {@code file}, or null when there is none. */
  static Found read(FileSystem fs, Path file) throws IOException {
    long modified;
    byte[] bytes;
    try {
      modified = fs.getFileStatus(file).getModificationTime();
      try (InputStream in = fs.open(file)) {
        bytes = in.readNBytes(1 << 16);
      }
    } catch (FileNotFoundException e) {
      return null;
    }
    try {
      Map<?, ?> m = JSON.readValue(bytes, Map.class);
      return new Found(
          holder(m), number(m, "heartbeat_ms"), number(m, "lease_ms"), modified, bytes);
    } catch (IOException | RuntimeException e) {
      return new Found(null, 0, 0, modified, bytes);
    }
  }

  private static OutputLock.Holder holder(Map<?, ?> m) {
    return new OutputLock.Holder(
        String.valueOf(m.get("job")),
        String.valueOf(m.get("description")),
        String.valueOf(m.get("user")),
        String.valueOf(m.get("host")),
        ((Number) m.get("pid")).longValue(),
        ((Number) m.get("process_start_ms")).longValue(),
        String.valueOf(m.get("started")),
        text(m, "boot_id"),
        text(m, "pid_namespace"));
  }

  private static long number(Map<?, ?> m, String key) {
    return m.get(key) instanceof Number n ? n.longValue() : 0L;
  }

  private static String text(Map<?, ?> m, String key) {
    return m.get(key) instanceof String s ? s : null;
  }
}
