package dev.spindle.spark.sink;

import dev.spindle.spark.shard.PartChecks;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writes the record batches of one {@link VectorSchemaRoot} to an Arrow IPC file on a Hadoop
 * FileSystem ({@link OutputFormat#ARROW}); the contract is {@link BatchFileSink}'s. As it writes,
 * it checksums the file and each record batch's block; the batches' checksums go into the footer's
 * custom metadata ({@link PartChecks#BATCH_CRCS}) so that a reader of a few batches verifies those.
 */
final class ArrowFileSink implements BatchFileSink {
  private final Path path;
  private final CrcOutputStream out;
  private final Map<String, String> footer = new HashMap<>(); // the writer reads it at end()
  private final ArrowFileWriter writer;
  private final StringBuilder batchCrcs = new StringBuilder();
  private final StoredIndexRange indices = new StoredIndexRange();
  private long rows;
  private int batches;
  private boolean closed;

  public ArrowFileSink(Path path, Configuration conf, VectorSchemaRoot root) throws IOException {
    this.path = path;
    FileSystem fs = path.getFileSystem(conf);
    try {
      this.out = new CrcOutputStream(fs.create(path, false));
    } catch (IOException e) {
      throw failed(e);
    }
    try {
      this.writer = new ArrowFileWriter(root, null, Channels.newChannel(out), footer);
      writer.start();
    } catch (IOException e) {
      out.close();
      throw failed(e);
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  /** Appends the root's current rows as one record batch. */
  @Override
  public void write(VectorSchemaRoot root) throws IOException {
    indices.add(root);
    out.startSegment();
    try {
      writer.writeBatch();
    } catch (IOException e) {
      throw failed(e);
    }
    batchCrcs.append(PartChecks.hex(blockCrc()));
    rows += root.getRowCount();
    batches++;
  }

  /** The checksum of the record batch just written: the bytes of its block, nothing else. */
  private long blockCrc() {
    List<ArrowBlock> blocks = writer.getRecordBlocks();
    ArrowBlock block = blocks.get(blocks.size() - 1);
    long length = block.getMetadataLength() + block.getBodyLength();
    if (block.getOffset() != out.segmentStart() || out.getPos() - out.segmentStart() != length) {
      throw new IllegalStateException(
          "Arrow wrote record batch "
              + batches
              + " of "
              + path
              + " as bytes "
              + out.segmentStart()
              + ".."
              + out.getPos()
              + " but recorded its block at "
              + block.getOffset()
              + " for "
              + length
              + " bytes");
    }
    return out.segmentCrc();
  }

  @Override
  public Path path() {
    return path;
  }

  @Override
  public long rows() {
    return rows;
  }

  public int batches() {
    return batches;
  }

  @Override
  public PartChecks checks() {
    if (!closed) {
      throw new IllegalStateException(path + " is still being written");
    }
    String list = batchCrcs.toString();
    return new PartChecks(
        out.fileCrc(), PartChecks.crcOfList(list), indices.first(), indices.last());
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try (CrcOutputStream o = out) {
      footer.put(PartChecks.BATCH_CRCS, batchCrcs.toString());
      writer.end();
      writer.close();
    } catch (IOException e) {
      throw failed(e);
    }
  }

  private IOException failed(IOException e) {
    return BatchFileSink.failed(path, e);
  }
}
