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
 * FileSystem ({@link OutputFormat#ARROW}); the contract is {@link BatchFileSink}'s.
 */
public final class ArrowFileSink implements BatchFileSink {
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
  @Override
  public void write(VectorSchemaRoot root) throws IOException {
    try {
      writer.writeBatch();
    } catch (IOException e) {
      throw failed(e);
    }
    rows += root.getRowCount();
    batches++;
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

  private IOException failed(IOException e) {
    return BatchFileSink.failed(path, e);
  }
}
