package dev.spindle.spark.manifest;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cached manifest on storage: the JSON file ({@link ManifestCodec}), which is authoritative and
 * readable, and its binary form beside it ({@link ManifestBinary}: {@code _spindle_manifest.bin}
 * beside {@code _spindle_manifest.json}, {@code m.bin} beside {@code m.json}), which is what is
 * read while it stands for that JSON. The binary form records the JSON's size and modification time
 * as written; a JSON rewritten since (by hand, or by a version that writes only the JSON), a binary
 * form that is damaged or missing, are read from the JSON instead, with a warning naming both
 * files, and the binary form is written again. Deleting the JSON deletes the cache: a binary form
 * alone is never read. Whichever form is read, the cache is used only after its shards passed the
 * change check ({@code ManifestCache}). Driver thread; stateless.
 */
final class ManifestFiles {
  private static final Logger LOG = LoggerFactory.getLogger(ManifestFiles.class);

  /** Caches without a fingerprint already named in the log. */
  private static final Set<String> UNFINGERPRINTED_SAID = ConcurrentHashMap.newKeySet();

  private ManifestFiles() {}

  /** Where the binary form of the JSON cache {@code json} lives. */
  static Path binaryBeside(Path json) {
    String name = json.getName();
    return new Path(
        json.getParent(),
        (name.endsWith(".json") ? name.substring(0, name.length() - ".json".length()) : name)
            + ".bin");
  }

  /**
   * Reads the cache whose JSON is {@code json}: from its binary form when that stands for this
   * JSON, else from the JSON (then writing the binary form again).
   *
   * @throws FileNotFoundException when the JSON does not exist
   * @throws ManifestCodec.OutdatedException for a JSON of an earlier format, to be counted again
   * @throws ManifestCodec.EditedException for a JSON edited since it was written
   * @throws IOException naming the JSON when it cannot be used
   */
  static Manifest read(FileSystem fs, Path json) throws IOException {
    FileStatus status = fs.getFileStatus(json);
    Path bin = binaryBeside(json);
    Manifest m = readBinary(fs, bin, status);
    if (m != null) {
      return m;
    }
    long start = System.nanoTime();
    try (InputStream in = fs.open(json)) {
      ManifestCodec.Document document = ManifestCodec.readDocument(in);
      m = document.manifest();
      if (document.fingerprint() == null && UNFINGERPRINTED_SAID.add(json.toString())) {
        LOG.info(
            "{} records no fingerprint (written by an earlier Spindle): an edit of its sample"
                + " counts would not be seen; delete it to count again and record one",
            json);
      }
    } catch (ManifestCodec.OutdatedException | ManifestCodec.EditedException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new IOException(
          "Cannot use the cached manifest "
              + json
              + ": "
              + e.getMessage()
              + " (delete it to count again)",
          e);
    }
    LOG.info(
        "Read the manifest of {} shards from {} in {} s", m.shards().size(), json, seconds(start));
    writeBinary(fs, bin, m, status);
    return m;
  }

  /**
   * Writes the JSON under a temporary name and renames it into place, then the binary form bound to
   * the JSON as its file system now reports it. A binary form that cannot be written is no error
   * (the JSON alone is a cache), but one left from before is removed.
   *
   * @throws IOException when the JSON cannot be written
   */
  static void write(FileSystem fs, Path json, Manifest m) throws IOException {
    Path bin = binaryBeside(json);
    long written = replace(fs, json, out -> ManifestCodec.write(m, out));
    FileStatus status = fs.getFileStatus(json);
    if (status.getLen() != written) { // another job's JSON landed in between: not ours to bind
      LOG.warn(
          "{} changed while it was written ({} bytes written, {} found); its binary form"
              + " {} is not written",
          json,
          written,
          status.getLen(),
          bin);
      deleteOrWarn(fs, bin);
      return;
    }
    writeBinary(fs, bin, m, status);
  }

  /** The manifest in {@code bin} when it stands for {@code json}, else null (saying why). */
  private static Manifest readBinary(FileSystem fs, Path bin, FileStatus json) throws IOException {
    long start = System.nanoTime();
    ManifestBinary.Stored stored;
    try (InputStream in = fs.open(bin)) {
      stored = ManifestBinary.read(in);
    } catch (FileNotFoundException e) {
      LOG.info("{} has no binary form {} yet: reading the JSON", json.getPath(), bin);
      return null;
    } catch (IllegalArgumentException | ChecksumException e) {
      LOG.warn(
          "Cannot use {}, the binary form of {}: {}; reading the JSON instead",
          bin,
          json.getPath(),
          e.getMessage());
      return null;
    }
    ManifestBinary.Binding now =
        new ManifestBinary.Binding(json.getLen(), json.getModificationTime());
    if (!stored.binding().equals(now)) {
      LOG.warn(
          "{} was derived from {} when that had {} bytes, modified {} (now {} bytes,"
              + " modified {}): reading the JSON instead",
          bin,
          json.getPath(),
          stored.binding().jsonBytes(),
          stored.binding().jsonModificationTime(),
          now.jsonBytes(),
          now.jsonModificationTime());
      return null;
    }
    LOG.info(
        "Read the manifest of {} shards from {} (the binary form of {}) in {} s",
        stored.fingerprint().shards(),
        bin,
        json.getPath(),
        seconds(start));
    return stored.manifest();
  }

  /** Writes the binary form; a failure is logged, and the old binary form removed if it can be. */
  private static void writeBinary(FileSystem fs, Path bin, Manifest m, FileStatus json) {
    try {
      byte[] bytes =
          ManifestBinary.toBytes(
              m, new ManifestBinary.Binding(json.getLen(), json.getModificationTime()));
      replace(fs, bin, out -> out.write(bytes));
    } catch (IOException | IllegalArgumentException e) {
      LOG.warn(
          "Cannot write {}, the binary form of {}: {} (the JSON is read instead)",
          bin,
          json.getPath(),
          e.toString());
      deleteOrWarn(fs, bin);
    }
  }

  /** Removes a binary form that no longer stands for its JSON (it would be refused anyway). */
  private static void deleteOrWarn(FileSystem fs, Path bin) {
    try {
      fs.delete(bin, false);
    } catch (IOException e) {
      LOG.warn(
          "Cannot delete {}: {} (its binding to the JSON keeps it from being read)",
          bin,
          e.toString());
    }
  }

  private interface Writing {
    void to(OutputStream out) throws IOException;
  }

  /** Writes {@code file} under a temporary name and renames it into place; returns its size. */
  private static long replace(FileSystem fs, Path file, Writing writing) throws IOException {
    Path temp = new Path(file.getParent(), "_" + file.getName() + ".tmp");
    long size;
    try (FSDataOutputStream out = fs.create(temp, true)) {
      writing.to(out);
      out.flush();
      size = out.getPos();
    }
    fs.delete(file, false);
    if (!fs.rename(temp, file)) {
      throw new IOException("rename " + temp + " to " + file + " failed");
    }
    return size;
  }

  private static double seconds(long since) {
    return Math.round((System.nanoTime() - since) / 1e6) / 1e3;
  }
}
