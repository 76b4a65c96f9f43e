package dev.spindle.spark.shard;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.bytes.ByteBufferAllocator;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.internal.hadoop.metadata.IndexReference;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.ParquetFileRange;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A Parquet {@link InputFile} whose streams remember the last IOException of the storage itself.
 * parquet-mr reports a file's damaged content (a page header it cannot decode, a chunk with more
 * values than declared) as IOException too, so {@link ParquetRows} asks this whether the storage
 * failed: if not, the IOException is the file's damage (found by fuzzing). An end of file is the
 * file's too: its footer placed something past its end. Owned by one reader; the streams are read
 * by its thread (vectored reads may complete on others, hence the volatile).
 */
final class WatchedInputFile implements InputFile {
  private final InputFile file;
  private volatile IOException storageFailure;

  WatchedInputFile(InputFile file) {
    this.file = file;
  }

  /** The storage's last failure, or null when it has not failed. */
  IOException storageFailure() {
    return storageFailure;
  }

  /**
   * A Parquet reader of a watched file, so that its owner can ask the file whether it failed; it
   * knows the file's length and lends a second stream of it for {@link PageHeaderCheck}.
   */
  static final class Reader extends ParquetFileReader {
    private final WatchedInputFile file;
    private final long length;
    private final boolean decrypting; // keys given: footers and indexes may be encrypted
    private SeekableInputStream headers; // opened on first use, closed with the reader

    Reader(WatchedInputFile file, ParquetReadOptions options) throws IOException {
      this(
          file,
          options,
          file
          .new Stream(file.watch(file.file::newStream), options.getDecryptionProperties() == null));
    }

    /** {@code f} checks the footer parquet-mr reads through it ({@link BoundedThrift}). */
    private Reader(WatchedInputFile file, ParquetReadOptions options, Stream f) throws IOException {
      super(file, options, f);
      f.footerNext = false;
      this.file = file;
      this.length = file.getLength();
      this.decrypting = options.getDecryptionProperties() != null;
    }

    /** {@link WatchedInputFile#storageFailure()} of the file read. */
    IOException storageFailure() {
      return file.storageFailure();
    }

    /**
     * parquet-mr's, decoded within the bytes the footer gives the index ({@link BoundedThrift}):
     * parquet-mr's own decoding allocates what the index's list of pages declares. An index that
     * does not fit them is an IOException, which parquet-mr takes for a missing index (the row
     * group is then read whole). Files with decryption keys keep parquet-mr's own.
     */
    @Override
    public OffsetIndex readOffsetIndex(ColumnChunkMetaData column) throws IOException {
      IndexReference ref = column.getOffsetIndexReference();
      if (ref == null || decrypting) {
        return super.readOffsetIndex(column);
      }
      if (ref.getOffset() < 0
          || ref.getLength() <= 0
          || ref.getLength() > length - ref.getOffset()) {
        throw new IOException(
            "the offset index of column '"
                + column.getPath().toDotString()
                + "' declares "
                + ref.getLength()
                + " bytes from byte "
                + ref.getOffset()
                + ", past the end of the file ("
                + length
                + " bytes)");
      }
      byte[] bytes = new byte[ref.getLength()];
      f.seek(ref.getOffset());
      f.readFully(bytes);
      return ParquetMetadataConverter.fromParquetOffsetIndex(
          BoundedThrift.read(
              new ByteArrayInputStream(bytes),
              bytes.length,
              new org.apache.parquet.format.OffsetIndex()));
    }

    /** The file's length in bytes. */
    long length() {
      return length;
    }

    /**
     * A stream of the file apart from parquet-mr's own (whose position its vectored reads leave
     * where it was), watched like it; owned by this reader, valid until it is closed.
     */
    SeekableInputStream headerStream() throws IOException {
      if (headers == null) {
        headers = file.newStream();
      }
      return headers;
    }

    @Override
    public void close() throws IOException {
      try {
        if (headers != null) {
          SeekableInputStream open = headers;
          headers = null;
          open.close();
        }
      } finally {
        super.close();
      }
    }
  }

  @Override
  public long getLength() throws IOException {
    return watch(file::getLength);
  }

  @Override
  public SeekableInputStream newStream() throws IOException {
    return new Stream(watch(file::newStream));
  }

  private interface Call<T> {
    T run() throws IOException;
  }

  private <T> T watch(Call<T> call) throws IOException {
    try {
      return call.run();
    } catch (EOFException e) {
      throw e;
    } catch (IOException e) {
      storageFailure = e;
      throw e;
    }
  }

  private final class Stream extends SeekableInputStream {
    private final SeekableInputStream in;

    /**
     * The next {@link #readFully(ByteBuffer)} reads a plaintext footer, to be checked before
     * parquet-mr decodes it ({@link BoundedThrift}): parquet-mr's {@code readFooter} reads the
     * footer's bytes with one such call, its first on the stream.
     */
    private boolean footerNext;

    Stream(SeekableInputStream in) {
      this(in, false);
    }

    Stream(SeekableInputStream in, boolean footerNext) {
      this.in = in;
      this.footerNext = footerNext;
    }

    @Override
    public long getPos() throws IOException {
      return watch(in::getPos);
    }

    @Override
    public void seek(long pos) throws IOException {
      watch(
          () -> {
            in.seek(pos);
            return null;
          });
    }

    @Override
    public int read() throws IOException {
      return watch(in::read);
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return watch(() -> in.read(b, off, len));
    }

    @Override
    public void readFully(byte[] b) throws IOException {
      readFully(b, 0, b.length);
    }

    @Override
    public void readFully(byte[] b, int off, int len) throws IOException {
      watch(
          () -> {
            in.readFully(b, off, len);
            return null;
          });
    }

    @Override
    public int read(ByteBuffer buf) throws IOException {
      return watch(() -> in.read(buf));
    }

    @Override
    public void readFully(ByteBuffer buf) throws IOException {
      int from = buf.position();
      watch(
          () -> {
            in.readFully(buf);
            return null;
          });
      if (footerNext) {
        footerNext = false;
        BoundedThrift.checkFooter(buf.duplicate().limit(buf.position()).position(from));
      }
    }

    @Override
    public boolean readVectoredAvailable(ByteBufferAllocator allocator) {
      return in.readVectoredAvailable(allocator);
    }

    @Override
    public void readVectored(List<ParquetFileRange> ranges, ByteBufferAllocator allocator)
        throws IOException {
      watch(
          () -> {
            in.readVectored(ranges, allocator);
            return null;
          });
      for (ParquetFileRange r : ranges) {
        r.setDataReadFuture(
            r.getDataReadFuture()
                .whenComplete(
                    (data, failure) -> {
                      Throwable t =
                          failure instanceof CompletionException c ? c.getCause() : failure;
                      if (t instanceof IOException io && !(t instanceof EOFException)) {
                        storageFailure = io;
                      }
                    }));
      }
    }

    @Override
    public void close() throws IOException {
      watch(
          () -> {
            in.close();
            return null;
          });
    }
  }
}
