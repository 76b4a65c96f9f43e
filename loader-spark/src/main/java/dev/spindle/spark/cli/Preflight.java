package dev.spindle.spark.cli;

import dev.spindle.spark.manifest.ShardCatalog;
import dev.spindle.spark.shard.BracePattern;
import dev.spindle.spark.shard.HadoopConf;
import dev.spindle.spark.sink.OutputCommitter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.SparkConf;

/**
 * The checks of a command's paths that need no cluster, run before its SparkSession starts (which
 * takes seconds, more on a cluster): a mistyped {@code --input}, an {@code --output} that holds a
 * committed output, or a {@code --report} that cannot be written is reported at once, not after the
 * session is up. Paths are looked at through the Hadoop FileSystem API on the driver, with the
 * configuration the session's SparkContext will have ({@link HadoopConf#beforeSession}). Each check
 * refuses only what the job itself would refuse, with the same message; the job checks again when
 * it runs (files may change in between). Main thread.
 */
final class Preflight {
  private final Configuration hadoop;

  private Preflight(Configuration hadoop) {
    this.hadoop = hadoop;
  }

  /** Checks with the Hadoop configuration of a session started with {@code settings}. */
  static Preflight of(Map<String, String> settings) {
    SparkConf spark = new SparkConf(true);
    settings.forEach(spark::set);
    return new Preflight(HadoopConf.beforeSession(spark));
  }

  /**
   * The input exists (a brace pattern: is well formed) and, when it is a folder, holds something
   * that is not hidden: files and folders whose names start with {@code _} or {@code .} are not
   * read, except a preprocess output's {@code _manifest.json}.
   *
   * @throws IOException naming the input
   */
  Preflight input(String uri) throws IOException {
    ShardCatalog.requireInput(hadoop, uri);
    if (BracePattern.isPattern(uri)) {
      return this;
    }
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(uri);
    FileSystem fs = path.getFileSystem(hadoop);
    if (fs.getFileStatus(path).isDirectory()) {
      for (FileStatus f : fs.listStatus(path)) {
        String name = f.getPath().getName();
        if (name.equals(OutputCommitter.MANIFEST)
            || !(name.startsWith("_") || name.startsWith("."))) {
          return this;
        }
      }
      throw new IOException("No shards under " + uri + ": the folder is empty");
    }
    return this;
  }

  /** What {@link OutputCommitter#precheck} refuses of a job's output folder. */
  Preflight output(String uri, boolean overwrite) throws IOException {
    OutputCommitter.precheck(uri, hadoop, overwrite);
    return this;
  }

  /**
   * A local file the command writes ({@code flag}: {@code --report}, {@code --save-state}), when
   * given: it is no folder, and its folder exists as a writable folder or can be created.
   *
   * @throws IOException naming the flag and the file
   */
  Preflight localFile(String flag, Path file) throws IOException {
    if (file == null) {
      return this;
    }
    Path absolute = file.toAbsolutePath();
    if (Files.isDirectory(absolute)) {
      throw new IOException(flag + " " + file + " is a folder, not a file");
    }
    Path existing = absolute.getParent();
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing != null && !Files.isDirectory(existing)) {
      throw new IOException(flag + " " + file + " cannot be written: " + existing + " is a file");
    }
    if (existing != null && !Files.isWritable(existing)) {
      throw new IOException(
          flag + " " + file + " cannot be written: " + existing + " is not writable");
    }
    return this;
  }

  /**
   * A file of a Hadoop URI the job reads or writes ({@code flag}: {@code --manifest}): it is no
   * folder, and its nearest existing parent is no file.
   *
   * @throws IOException naming the flag and the URI
   */
  Preflight file(String flag, String uri) throws IOException {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(uri);
    FileSystem fs = path.getFileSystem(hadoop);
    if (fs.exists(path) && fs.getFileStatus(path).isDirectory()) {
      throw new IOException(flag + " " + uri + " is a folder, not a file");
    }
    org.apache.hadoop.fs.Path existing = path.getParent();
    while (existing != null && !fs.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing != null && fs.getFileStatus(existing).isFile()) {
      throw new IOException(flag + " " + uri + " cannot be written: " + existing + " is a file");
    }
    return this;
  }

  /**
   * A folder of a Hadoop URI the job writes into ({@code flag}: {@code --state-dir}), when given:
   * it is no file, and its nearest existing parent is no file either.
   *
   * @throws IOException naming the flag and the URI
   */
  Preflight folder(String flag, String uri) throws IOException {
    if (uri == null || uri.isEmpty()) {
      return this;
    }
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(uri);
    FileSystem fs = path.getFileSystem(hadoop);
    org.apache.hadoop.fs.Path existing = path;
    while (existing != null && !fs.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing != null && fs.getFileStatus(existing).isFile()) {
      throw new IOException(
          flag
              + " "
              + uri
              + (existing.equals(path)
                  ? " is a file, not a folder"
                  : " cannot be created: " + existing + " is a file"));
    }
    return this;
  }
}
