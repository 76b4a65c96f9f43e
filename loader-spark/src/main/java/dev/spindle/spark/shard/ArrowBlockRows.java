package dev.spindle.spark.shard;

import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.util.List;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * Where each record batch of an Arrow IPC file starts, in rows, found from the batches' message
 * headers alone (no body is read). {@code preprocess} writes batches of equal size but the last, so
 * when the first and last headers fit that layout the others are not read; a batch that does not
 * hold the rows this assumed is caught when it is loaded ({@link #rows}). Stateless; any thread.
 */
final class ArrowBlockRows {
  private ArrowBlockRows() {}

  /**
   * The first row of each of {@code blocks}, then the file's row count.
   *
   * @param expected the rows the file should hold (the manifest's count): it decides whether the
   *     equal-batches layout is taken without reading every header
   */
  static long[] starts(SeekableByteChannel channel, List<ArrowBlock> blocks, long expected)
      throws IOException {
    int n = blocks.size();
    long[] starts = new long[n + 1];
    if (n == 0) {
      return starts;
    }
    long first = rows(channel, blocks.get(0));
    long last = n == 1 ? first : rows(channel, blocks.get(n - 1));
    boolean uniform = last <= first && (n - 1) * first + last == expected;
    for (int k = 0; k < n; k++) {
      long size = uniform ? (k == n - 1 ? last : first) : rows(channel, blocks.get(k));
      starts[k + 1] = starts[k] + size;
    }
    return starts;
  }

  /** The row count in the header of the record batch at {@code block}. */
  static long rows(SeekableByteChannel channel, ArrowBlock block) throws IOException {
    channel.position(block.getOffset());
    MessageMetadataResult message = MessageSerializer.readMessage(new ReadChannel(channel));
    if (message == null || message.headerType() != MessageHeader.RecordBatch) {
      throw new IOException("No record batch at byte " + block.getOffset());
    }
    return ((RecordBatch) message.getMessage().header(new RecordBatch())).length();
  }
}
