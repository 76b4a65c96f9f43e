package dev.spindle.spark.iobench;

import dev.spindle.gpu.feed.SlotWriter;
import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.serve.BatchConsumer;
import dev.spindle.spark.serve.ConsumerHook;
import dev.spindle.spark.serve.FeedBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.zip.CRC32C;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/**
 * What a feed delivered, as one digest: each batch's pixels, labels and planned indices hashed
 * (CRC-32C, cheap beside decoding) under its key, and the SHA-256 of those in key order, so two
 * feeds of the same plan from different stores match only if every row's bytes do. Installed as the
 * JVM's {@link ConsumerHook} for one measured feed (feed tasks of embedded Spark run in this JVM);
 * {@link #close} removes it. Batches arrive on task threads; the rest on the bench's thread.
 */
final class ContentDigest implements AutoCloseable {
  private final Map<String, Long> batches = new ConcurrentSkipListMap<>();

  private ContentDigest() {}

  /** Hashes every batch feed tasks deliver in this JVM from now until {@link #close}. */
  static ContentDigest install() {
    ContentDigest d = new ContentDigest();
    ConsumerHook.install(d::hashing);
    return d;
  }

  /** The digest of the batches delivered so far (hex), and how many there were. */
  String hex() {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      batches.forEach((k, v) -> sha.update((k + "=" + v + "\n").getBytes(StandardCharsets.UTF_8)));
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("No SHA-256 in this JVM", e);
    }
  }

  int batches() {
    return batches.size();
  }

  @Override
  public void close() {
    ConsumerHook.uninstall();
  }

  private BatchConsumer hashing(BatchConsumer next) {
    return new BatchConsumer() {
      @Override
      public void accept(FeedBatch batch) {
        batches.put(batch.key().toString(), hash(batch));
        next.accept(batch);
      }

      @Override
      public String stageName() {
        return next.stageName();
      }

      @Override
      public SlotWriter claimSlot(int rank) throws InterruptedException {
        return next.claimSlot(rank);
      }
    };
  }

  /** The batch's planned indices, labels and pixels (indices alone for a ring slot's batch). */
  private static long hash(FeedBatch batch) {
    CRC32C crc = new CRC32C();
    long[] indices = batch.indices();
    ByteBuffer planned = ByteBuffer.allocate(indices.length * Long.BYTES);
    planned.asLongBuffer().put(indices);
    crc.update(planned);
    VectorSchemaRoot root = batch.root();
    if (root != null) {
      int rows = root.getRowCount();
      update(crc, root.getVector(BatchSchema.LABEL), rows);
      FieldVector image = root.getVector(BatchSchema.IMAGE);
      if (image instanceof ExtensionTypeVector<?> e) {
        image = e.getUnderlyingVector();
      }
      FixedSizeListVector list = (FixedSizeListVector) image;
      update(crc, (FieldVector) list.getDataVector(), rows * list.getListSize());
    }
    return crc.getValue();
  }

  private static void update(CRC32C crc, FieldVector v, int values) {
    long bytes = (long) values * ((BaseFixedWidthVector) v).getTypeWidth();
    crc.update(v.getDataBuffer().nioBuffer(0, Math.toIntExact(bytes)));
  }
}
