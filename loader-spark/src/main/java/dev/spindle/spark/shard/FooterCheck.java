package dev.spindle.spark.shard;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.format.FileMetaData;
import shaded.parquet.org.apache.thrift.TConfiguration;
import shaded.parquet.org.apache.thrift.TException;
import shaded.parquet.org.apache.thrift.protocol.TCompactProtocol;
import shaded.parquet.org.apache.thrift.transport.TIOStreamTransport;

/**
 * Decodes a Parquet footer's Thrift before parquet-mr does, with every list, set, map and string
 * held to the footer's own length: parquet-mr's Thrift allocates a container's declared length
 * before reading its elements and bounds it by nothing (an element type of no bytes passes its
 * size check), so a 378-byte file whose list of encodings declared over a billion elements threw
 * OutOfMemoryError (found by fuzzing). Each element of a real footer takes at least a byte, so a
 * footer that passes loses nothing; one that does not is refused. Costs a second decoding of the
 * footer's bytes (parquet-mr's own follows), no second read. Uses the Thrift classes
 * parquet-format-structures shades, as parquet-mr does. Stateless; any thread.
 */
final class FooterCheck {
  private FooterCheck() {}

  /**
   * Decodes {@code footer} (its remaining bytes; not consumed) as a plaintext footer's {@code
   * FileMetaData}.
   *
   * @throws IOException naming what Thrift refused, when it cannot be decoded within its length
   */
  static void check(ByteBuffer footer) throws IOException {
    int length = footer.remaining();
    try {
      TIOStreamTransport in = new TIOStreamTransport(new TConfiguration(Math.max(length, 1),
          TConfiguration.DEFAULT_MAX_FRAME_SIZE, TConfiguration.DEFAULT_RECURSION_DEPTH),
          ByteBufferInputStream.wrap(footer.duplicate()));
      new FileMetaData().read(new TCompactProtocol(in, length, length));
    } catch (TException e) {
      throw new IOException("its Thrift cannot be read within its " + length + " bytes: "
          + e.getMessage(), e);
    }
  }
}
