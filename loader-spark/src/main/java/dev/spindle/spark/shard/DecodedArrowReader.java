package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * Reads an Arrow IPC part file of a {@code preprocess} output ({@link ShardFormat#DECODED_ARROW}):
 * row {@code N} (counted from 0 over the file) is sample {@code N}, its {@code image} the stored
 * pixels, with its stored {@code label}, {@code key} and {@code index} ({@link StoredRows}). Only
 * the record batches holding a wanted row are loaded: where each batch starts is found from the
 * batches' headers ({@link ArrowBlockRows}), never from their bodies. A file that no longer matches
 * the manifest (another size or row count, another schema, a batch of other rows) fails the open or
 * the read, naming it. Each record batch loaded is checked against its CRC-32C, which the file's
 * footer lists and the manifest vouches for ({@link PartChecks}: the footer's list must hash to the
 * manifest's {@code batches_crc32c}), and each row's stored index against where the manifest puts
 * it ({@link StoredIndexCheck}): a changed byte, another run's file of the same size or a reordered
 * {@code files} list fail the read naming the file (not under a manifest of an earlier Spindle,
 * which records neither). Owns an Arrow allocator of its own (one record batch at a time), closed
 * with it; one thread.
 */
final class DecodedArrowReader implements ShardReader {
  private long copied;
  private final Shard shard;
  private final String fileName;
  private final SampleLimits limits;
  private final BufferAllocator allocator;
  private final HadoopReadChannel channel;
  private final ArrowFileReader file;
  private final long[] batchCrcs; // each record batch's, as the manifest vouches; null: unchecked
  private final StoredIndexCheck indices;
  private final List<ArrowBlock> blocks;
  private final long[] starts; // the first row of each record batch, then the file's row count
  private final int[] wanted; // rows to read, strictly increasing; null = every row
  private int nextWanted;
  private long nextRow;
  private int loaded = -1;
  private StoredColumns columns;
  private boolean closed;

  private DecodedArrowReader(
      Shard shard,
      SampleLimits limits,
      BufferAllocator allocator,
      HadoopReadChannel channel,
      int[] wanted)
      throws IOException {
    this.shard = shard;
    this.fileName = new Path(shard.uri()).getName();
    this.limits = limits;
    this.allocator = allocator;
    this.channel = channel;
    this.wanted = wanted;
    this.indices = new StoredIndexCheck(shard);
    this.file = new ArrowFileReader(channel, allocator);
    try {
      this.blocks = file.getRecordBlocks();
      this.batchCrcs = StoredFiles.batchCrcs(shard, file.getMetaData(), blocks.size());
      StoredColumns.check(
          file.getVectorSchemaRoot(),
          shard.uri(),
          limits.fields().extras(),
          limits.fields().hasImage());
      this.starts = ArrowBlockRows.starts(channel, blocks, shard.samples());
      StoredFiles.requireRows(shard, starts[starts.length - 1]);
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
  }

  /** A reader of only the rows at {@code positions} (strictly increasing), or all if null. */
  static DecodedArrowReader open(
      Shard shard, Configuration conf, SampleLimits limits, int[] positions) throws IOException {
    FileStatus status = StoredFiles.requireSize(shard, conf);
    BufferAllocator allocator = new RootAllocator(Long.MAX_VALUE);
    HadoopReadChannel channel = null;
    try {
      channel =
          new HadoopReadChannel(StoredFiles.openSelfChecked(shard, status, conf), status.getLen());
      return new DecodedArrowReader(shard, limits, allocator, channel, positions);
    } catch (IOException | RuntimeException e) {
      if (channel != null) {
        channel.close();
      }
      allocator.close();
      if (e instanceof RuntimeException) {
        throw StoredFiles.mismatch(
            shard.uri(), "it cannot be read as an Arrow IPC file (" + e.getMessage() + ")", e);
      }
      throw e;
    }
  }

  @Override
  public boolean hasNext() {
    return !closed && nextPosition() < starts[starts.length - 1];
  }

  /** Stored pixel bytes copied into the samples' arrays so far. */
  @Override
  public long copiedImageBytes() {
    return copied;
  }

  @Override
  public Sample next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more samples in " + shard.uri());
    }
    long row = nextPosition();
    if (wanted == null) {
      nextRow++;
    } else {
      nextWanted++;
    }
    int b = blockOf(row);
    if (b != loaded) {
      load(b);
    }
    Sample sample = columns.sample(shard, fileName, row, (int) (row - starts[b]), limits);
    if (sample.stored() != null) {
      indices.check(row, sample.stored().index());
    }
    copied += sample.image() == null ? 0 : sample.image().length;
    return sample;
  }

  private long nextPosition() {
    if (wanted == null) {
      return nextRow;
    }
    return nextWanted < wanted.length ? wanted[nextWanted] : Long.MAX_VALUE;
  }

  private int blockOf(long row) {
    int i = Arrays.binarySearch(starts, row);
    int b = i >= 0 ? i : -i - 2;
    while (starts[b + 1] == starts[b]) { // empty batches share their start with the next
      b++;
    }
    return b;
  }

  private void load(int b) {
    try {
      ArrowBlock block = blocks.get(b);
      channel.startTap();
      file.loadRecordBatch(block);
      checkCrc(
          b, channel.endTap(block.getOffset(), block.getMetadataLength() + block.getBodyLength()));
      VectorSchemaRoot root = file.getVectorSchemaRoot();
      long expected = starts[b + 1] - starts[b];
      if (root.getRowCount() != expected) {
        throw StoredFiles.mismatch(
            shard.uri(),
            "its record batch "
                + b
                + " holds "
                + root.getRowCount()
                + " rows, "
                + expected
                + " were expected");
      }
      loaded = b;
      columns = new StoredColumns(root, limits.fields().extras());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Failed reading record batch " + b + " of " + shard.uri() + ": " + e.getMessage(), e);
    }
  }

  /** Checks record batch {@code b}'s bytes, as just read, against its checksum. */
  private void checkCrc(int b, long crc) throws IOException {
    if (batchCrcs != null && crc != batchCrcs[b]) {
      throw StoredFiles.mismatch(
          shard.uri(),
          "its record batch "
              + b
              + " (rows "
              + starts[b]
              + " to "
              + (starts[b + 1] - 1)
              + ") "
              + (crc < 0
                  ? "was not read as one run of bytes, so its checksum cannot be checked"
                  : "has CRC-32C "
                      + PartChecks.hex(crc)
                      + ", its footer lists "
                      + PartChecks.hex(batchCrcs[b])));
    }
  }

  @Override
  public void close() throws IOException {
    if (!closed) {
      closed = true;
      try {
        file.close(); // its vectors and the channel
      } finally {
        allocator.close(); // fails loudly if a buffer leaked
      }
    }
  }
}
