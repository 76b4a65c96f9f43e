package dev.spindle.spark.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writes the record batches of one {@link VectorSchemaRoot} to an Arrow IPC file on a Hadoop
 * FileSystem. One thread. The root stays owned by the caller; each {@link #write()} appends the
 * root's current rows. The file is complete only after {@link #close()} returned normally; a task
 * that fails leaves a partial file that its committer deletes, never a visible one.
 */
public final class ArrowFileSink implements AutoCloseable {
  private final Path path;
  private final OutputStream out;
  private final ArrowFileWriter writer;
  private long rows;
  private int batches;
  private boolean closed;

  public ArrowFileSink(Path path, Configuration conf, VectorSchemaRoot root) throws IOException {
    this.path = path;
    FileSystem fs = path.getFileSystem(conf);
    try {
      this.out = fs.create(path, false);
    } catch (IOException e) {
      throw failed(e);
    }
    try {
      this.writer = new ArrowFileWriter(root, null, Channels.newChannel(out));
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
  public void write(VectorSchemaRoot root) throws IOException {
    try {
      writer.writeBatch();
    } catch (IOException e) {
      throw failed(e);
    }
    rows += root.getRowCount();
    batches++;
  }

  public Path path() {
    return path;
  }

  public long rows() {
    return rows;
  }

  public int batches() {
    return batches;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try (OutputStream o = out) {
      writer.end();
      writer.close();
    } catch (IOException e) {
      throw failed(e);
    }
  }

  /** Names the file: "No space left on device" alone does not say where. */
  private IOException failed(IOException e) {
    return e instanceof OutputWriteException ? e : new OutputWriteException("Cannot write " + path, e);
  }
}
