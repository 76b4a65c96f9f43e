package dev.spindle.spark.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Small files written so that a reader sees either the old content or the new, never a mix, and
 * files created only if absent. What each file system can promise differs, so each is used for what
 * it does atomically:
 *
 * <ul>
 *   <li>the local file system: {@code O_EXCL} creation and {@code rename(2)} over the old file,
 *       through {@code java.nio}, without Hadoop's {@code .crc} side files (a stale one would fail
 *       the next checked read);
 *   <li>object stores (s3a, gs, abfs, ...): a single PUT is visible whole or not at all; "create if
 *       absent" is a check then a PUT, so callers read back to confirm ownership;
 *   <li>HDFS and other file systems: {@code create(overwrite=false)} is atomic on the NameNode, and
 *       {@link FileContext#rename} with {@code OVERWRITE} replaces in one step.
 * </ul>
 *
 * Stateless; any thread.
 */
final class AtomicFiles {
  private static final Logger LOG = LoggerFactory.getLogger(AtomicFiles.class);
  private static final Set<String> NON_ATOMIC_WARNED = ConcurrentHashMap.newKeySet();
  private static final Set<String> OBJECT_STORES =
      Set.of("s3a", "s3", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "cosn", "obs");

  private AtomicFiles() {}

  /** Creates {@code path} with {@code content}; false (and nothing written) if it exists. */
  static boolean createIfAbsent(FileSystem fs, Path path, byte[] content) throws IOException {
    java.nio.file.Path local = localPath(fs, path);
    if (local != null) {
      try {
        Files.write(
            local,
            content,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE,
            StandardOpenOption.SYNC);
        return true;
      } catch (FileAlreadyExistsException e) {
        return false;
      }
    }
    try (OutputStream out = fs.create(path, false)) {
      out.write(content);
    } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
      return false;
    }
    return true;
  }

  /** Replaces (or creates) {@code path} with {@code content} in one visible step. */
  static void replace(FileSystem fs, Path path, byte[] content) throws IOException {
    java.nio.file.Path local = localPath(fs, path);
    if (local != null) {
      java.nio.file.Path temp =
          local.resolveSibling("." + local.getFileName() + "." + UUID.randomUUID());
      try {
        Files.write(temp, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.SYNC);
        Files.deleteIfExists(local.resolveSibling("." + local.getFileName() + ".crc"));
        Files.move(
            temp, local, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        syncFolder(local.getParent());
      } finally {
        Files.deleteIfExists(temp);
      }
      return;
    }
    if (isObjectStore(fs)) {
      try (OutputStream out = fs.create(path, true)) {
        out.write(content);
      }
      return;
    }
    Path temp = new Path(path.getParent(), "." + path.getName() + "." + UUID.randomUUID());
    try {
      try (OutputStream out = fs.create(temp, false)) {
        out.write(content);
      }
      renameOver(fs, temp, path);
    } finally {
      fs.delete(temp, false);
    }
  }

  /**
   * Makes a rename in {@code folder} durable: callers delete what the replaced file referred to
   * right after, which must not outlive the new file after a power loss.
   */
  private static void syncFolder(java.nio.file.Path folder) throws IOException {
    try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
      dir.force(true);
    }
  }

  private static void renameOver(FileSystem fs, Path temp, Path path) throws IOException {
    FileContext context;
    try {
      context = FileContext.getFileContext(fs.getUri(), fs.getConf());
    } catch (UnsupportedFileSystemException e) {
      // no AbstractFileSystem for this scheme: replace in two steps, the best it allows
      if (NON_ATOMIC_WARNED.add(fs.getUri().getScheme())) {
        LOG.warn(
            "{} has no atomic rename-over: {} is replaced by delete + rename",
            fs.getUri(),
            path.getName());
      }
      fs.delete(path, false);
      if (!fs.rename(temp, path)) {
        throw new IOException("Could not rename " + temp + " to " + path);
      }
      return;
    }
    context.rename(temp, path, Options.Rename.OVERWRITE);
  }

  /** Deletes {@code path} and, on the local file system, its {@code .crc} side file. */
  static void delete(FileSystem fs, Path path) throws IOException {
    fs.delete(path, false);
    java.nio.file.Path local = localPath(fs, path);
    if (local != null) {
      Files.deleteIfExists(local.resolveSibling("." + local.getFileName() + ".crc"));
    }
  }

  static boolean isObjectStore(FileSystem fs) {
    String scheme = fs.getUri().getScheme();
    return scheme != null && OBJECT_STORES.contains(scheme.toLowerCase(Locale.ROOT));
  }

  /** The java.nio path of a file on the local file system, or null on any other. */
  static java.nio.file.Path localPath(FileSystem fs, Path path) {
    if (!"file".equals(fs.getUri().getScheme())) {
      return null;
    }
    if (fs instanceof LocalFileSystem local) {
      return local.pathToFile(path).toPath();
    }
    if (fs instanceof RawLocalFileSystem raw) {
      return raw.pathToFile(path).toPath();
    }
    return null;
  }
}
