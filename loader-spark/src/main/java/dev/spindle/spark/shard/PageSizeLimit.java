package dev.spindle.spark.shard;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.ParquetDecodingException;

/**
 * Parquet's codecs with a bound on a page's declared uncompressed size: parquet-mr allocates that
 * size before decompressing, so a 400-byte file whose page header declares 2 GiB made the reader
 * throw OutOfMemoryError (found by fuzzing). A page over the bound is refused with a {@link
 * ParquetDecodingException}, which damages its row group like any undecodable page. Reading only;
 * the compressors are the delegate's. Thread-safe where the delegate is.
 */
final class PageSizeLimit implements CompressionCodecFactory {
  /** The least bound: parquet-mr and Spark write pages of about 1 MiB. */
  static final long MIN_PAGE_BYTES = 256L << 20;

  private final CompressionCodecFactory codecs;
  private final long maxPageBytes;

  private PageSizeLimit(CompressionCodecFactory codecs, long maxPageBytes) {
    this.codecs = codecs;
    this.maxPageBytes = maxPageBytes;
  }

  /**
   * {@code codecs} refusing pages over {@link #MIN_PAGE_BYTES} or twice {@code maxSampleBytes},
   * whichever is larger (a page holds at least one whole value), and never over what a Java array
   * holds.
   */
  static CompressionCodecFactory wrap(CompressionCodecFactory codecs, int maxSampleBytes) {
    long bound = Math.max(MIN_PAGE_BYTES, 2L * maxSampleBytes);
    return new PageSizeLimit(codecs, Math.min(bound, Integer.MAX_VALUE - 8));
  }

  @Override
  public BytesInputCompressor getCompressor(CompressionCodecName codec) {
    return codecs.getCompressor(codec);
  }

  @Override
  public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
    BytesInputDecompressor d = codecs.getDecompressor(codec);
    return new BytesInputDecompressor() {
      @Override
      public BytesInput decompress(BytesInput bytes, int uncompressedSize) throws IOException {
        check(codec, uncompressedSize);
        return d.decompress(bytes, uncompressedSize);
      }

      @Override
      public void decompress(
          ByteBuffer input, int compressedSize, ByteBuffer output, int uncompressedSize)
          throws IOException {
        check(codec, uncompressedSize);
        d.decompress(input, compressedSize, output, uncompressedSize);
      }

      @Override
      public void release() {
        d.release();
      }
    };
  }

  private void check(CompressionCodecName codec, int uncompressedSize) {
    if (uncompressedSize < 0 || uncompressedSize > maxPageBytes) {
      throw new ParquetDecodingException(
          "a "
              + codec
              + " page declares "
              + uncompressedSize
              + " bytes uncompressed (at most "
              + maxPageBytes
              + " are read)");
    }
  }

  @Override
  public void release() {
    codecs.release();
  }
}
