package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.format.FileMetaData;
import shaded.parquet.org.apache.thrift.TBase;
import shaded.parquet.org.apache.thrift.TConfiguration;
import shaded.parquet.org.apache.thrift.TException;
import shaded.parquet.org.apache.thrift.protocol.TCompactProtocol;
import shaded.parquet.org.apache.thrift.transport.TIOStreamTransport;

/**
 * Decodes Parquet's Thrift structures (a footer, a page header, an offset index) with every list,
 * set, map and string held to the bytes the structure has: parquet-mr's Thrift allocates a
 * container's declared length before reading its elements and bounds it by nothing (an element type
 * of no bytes passes its size check), so a 378-byte file whose footer declared a list of
 * 1,876,950,015 encodings threw OutOfMemoryError (found by fuzzing). Each element of a real
 * structure takes at least a byte, so one that fits its bytes loses nothing. Uses the Thrift
 * classes parquet-format-structures shades, as parquet-mr does. Stateless; any thread.
 */
final class BoundedThrift {
  private BoundedThrift() {}

  /**
   * Decodes {@code into} from {@code in}, no list, set, map or string declaring more than {@code
   * bound} elements or bytes, and no more than {@code bound} bytes read.
   *
   * @throws IOException naming what Thrift refused (or a failure of {@code in})
   */
  static <T extends TBase<?, ?>> T read(InputStream in, int bound, T into) throws IOException {
    try {
      TIOStreamTransport transport =
          new TIOStreamTransport(
              new TConfiguration(
                  Math.max(bound, 1),
                  TConfiguration.DEFAULT_MAX_FRAME_SIZE,
                  TConfiguration.DEFAULT_RECURSION_DEPTH),
              in);
      into.read(new TCompactProtocol(transport, bound, bound));
      return into;
    } catch (TException e) {
      if (e.getCause() instanceof IOException io) { // the stream's own failure
        throw io;
      }
      throw new IOException(
          "its Thrift cannot be read within its " + bound + " bytes: " + e.getMessage(), e);
    }
  }

  /**
   * Decodes a plaintext footer (the remaining bytes of {@code footer}, not consumed) before
   * parquet-mr does: it reads the footer once and decodes it without bounds.
   *
   * @throws IOException naming what Thrift refused
   */
  static void checkFooter(ByteBuffer footer) throws IOException {
    read(ByteBufferInputStream.wrap(footer.duplicate()), footer.remaining(), new FileMetaData());
  }
}
