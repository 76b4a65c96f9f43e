package dev.spindle.spark.manifest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.shard.BracePattern;
import dev.spindle.spark.shard.PartChecks;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import dev.spindle.spark.shard.StoredImages;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code preprocess} output folder as an input: found by the {@code _manifest.json} that {@code
 * preprocess} commits (a JSON object with {@code spindle_manifest_version}; a folder whose {@code
 * _manifest.json} lacks it is no preprocess output and is listed as usual). That manifest is the
 * commit record, so it alone makes the {@link Manifest}: its shards are exactly the files it lists,
 * in its order, with its row counts and sizes; nothing is listed or counted. Its {@code format}
 * ({@code arrow-ipc-file} or {@code parquet}) gives the shards' {@link ShardFormat}, its {@code
 * image_shape} and {@code transforms} the {@link StoredImages}, its {@code class_names} the class
 * names. A manifest that is not one {@code preprocess} writes fails naming the file and the field;
 * so does one whose files are not listed in ascending order of their stored indices (a reordered
 * list). Each file's checksums and stored index range ({@link PartChecks}) travel with its shard to
 * the readers, which check them ({@code shard.StoredFiles}, {@code shard.StoredIndexCheck}); a
 * manifest of an earlier Spindle records none, and its files are read unchecked (said once in the
 * log). Stateless; driver.
 */
public final class PreprocessedInput {
  /**
   * The commit record of a {@code preprocess} output, as {@code sink.OutputCommitter} writes it.
   */
  public static final String MANIFEST = "_manifest.json";

  private static final int VERSION = 1;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger LOG = LoggerFactory.getLogger(PreprocessedInput.class);

  /** Manifests whose unchecked part files were already named in the log. */
  private static final Set<String> UNCHECKED_SAID = ConcurrentHashMap.newKeySet();

  private PreprocessedInput() {}

  /**
   * The stored images of {@code input} when it is a {@code preprocess} output folder, else null (a
   * brace pattern, a file, a folder of shards).
   */
  public static StoredImages storedImages(Configuration conf, String input) throws IOException {
    Manifest m = manifest(conf, input);
    return m == null ? null : m.stored();
  }

  /** The manifest of {@code input} when it is a {@code preprocess} output folder, else null. */
  public static Manifest manifest(Configuration conf, String input) throws IOException {
    if (BracePattern.isPattern(input)) {
      return null;
    }
    Path root = new Path(input);
    FileSystem fs = root.getFileSystem(conf);
    FileStatus status;
    try {
      status = fs.getFileStatus(root);
    } catch (FileNotFoundException e) {
      return null;
    }
    return status.isDirectory() ? read(fs, status.getPath()) : null;
  }

  /** The manifest of the folder {@code dir} when it holds a preprocess manifest, else null. */
  static Manifest read(FileSystem fs, Path dir) throws IOException {
    Path file = new Path(dir, MANIFEST);
    JsonNode tree;
    try (InputStream in = fs.open(file)) {
      tree = JSON.readTree(in);
    } catch (FileNotFoundException e) {
      return null;
    } catch (JsonProcessingException e) {
      throw new IOException(
          file
              + " cannot be read as JSON ("
              + e.getOriginalMessage()
              + "); a preprocess output's _manifest.json is written whole or not at all",
          e);
    }
    if (tree == null || !tree.isObject() || !tree.has("spindle_manifest_version")) {
      return null;
    }
    return parse(tree, dir.toString(), file.toString());
  }

  private static Manifest parse(JsonNode m, String dir, String file) {
    Fields f = new Fields(m, file);
    int version = f.integer(m, "spindle_manifest_version");
    f.require(
        version == VERSION,
        "spindle_manifest_version is "
            + version
            + "; this Spindle reads "
            + VERSION
            + " (written by a newer Spindle?)");
    String format = f.text(m, "format");
    ShardFormat shardFormat =
        switch (format) {
          case "arrow-ipc-file" -> ShardFormat.DECODED_ARROW;
          case "parquet" -> ShardFormat.DECODED_PARQUET;
          default -> throw f.invalid("format is '" + format + "' (arrow-ipc-file or parquet)");
        };
    StoredImages stored = storedImages(f, m);
    List<String> classNames = new ArrayList<>();
    for (JsonNode n : f.array(m, "class_names")) {
      f.require(n.isTextual(), "class_names holds " + n + " (must be strings)");
      classNames.add(n.asText());
    }
    List<Shard> shards = shards(f, m, dir, shardFormat);
    long rows = shards.stream().mapToLong(Shard::samples).sum();
    f.require(
        !m.has("rows") || m.get("rows").asLong() == rows,
        "rows is " + m.get("rows") + " but its files hold " + rows);
    return new Manifest(dir, shards, classNames, stored);
  }

  /**
   * {@code image_shape} and {@code transforms}: both null for an output of samples without an image
   * ({@link StoredImages#none()}).
   */
  private static StoredImages storedImages(Fields f, JsonNode m) {
    if (m.has("image_shape") && m.get("image_shape").isNull()) {
      return StoredImages.none();
    }
    JsonNode shape = f.array(m, "image_shape");
    f.require(shape.size() == 3, "image_shape is " + shape + " (must be [H, W, C])");
    return new StoredImages(
        f.positive(shape.get(0), "image_shape[0]"),
        f.positive(shape.get(1), "image_shape[1]"),
        f.positive(shape.get(2), "image_shape[2]"),
        f.text(m, "transforms"));
  }

  private static List<Shard> shards(Fields f, JsonNode m, String dir, ShardFormat format) {
    String extension = format == ShardFormat.DECODED_ARROW ? ".arrow" : ".parquet";
    List<Shard> shards = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    long lastIndex = -1;
    String lastPath = null;
    int unchecked = 0;
    for (JsonNode e : f.array(m, "files")) {
      f.require(e.isObject(), "files holds " + e + " (must be {path, rows, bytes} objects)");
      String path = f.text(e, "path");
      f.require(
          !path.isEmpty()
              && !path.contains("/")
              && !path.startsWith(".")
              && path.endsWith(extension),
          "files lists '"
              + path
              + "' (must be a file name in the"
              + " folder ending with "
              + extension
              + ")");
      f.require(seen.add(path), "files lists '" + path + "' twice");
      long rows = f.nonNegative(e, "rows", path);
      long bytes = f.nonNegative(e, "bytes", path);
      PartChecks checks = checks(f, e, path, format, rows);
      if (checks != null && rows > 0) {
        f.require(
            checks.firstIndex() > lastIndex,
            "files lists '"
                + path
                + "' (stored indices "
                + checks.firstIndex()
                + ".."
                + checks.lastIndex()
                + ") after '"
                + lastPath
                + "' (.."
                + lastIndex
                + "); preprocess lists its part files in ascending index order (was the list"
                + " reordered?)");
        lastIndex = checks.lastIndex();
        lastPath = path;
      }
      unchecked += checks == null ? 1 : 0;
      // no modification time: the commit record has none, and committed part files are never
      // rewritten in place (their names carry the job id); readers check size, row count,
      // checksums and stored indices
      shards.add(new Shard(dir + "/" + path, format, bytes, 0L, rows, List.of(), null, checks));
    }
    if (unchecked > 0 && UNCHECKED_SAID.add(f.file())) {
      LOG.warn(
          "{}: {} of its {} part files have no checksum and stored index range (a manifest of an"
              + " earlier Spindle); they are read without those checks. Preprocess the input again"
              + " to have them checked",
          f.file(),
          unchecked,
          shards.size());
    }
    return shards;
  }

  /**
   * The file's checksums and stored index range, or null when the manifest records none (written
   * before they were): its {@code crc32c}, an Arrow file's {@code batches_crc32c}, and its {@code
   * first_index} and {@code last_index} (-1 for a file without rows).
   */
  private static PartChecks checks(
      Fields f, JsonNode e, String path, ShardFormat format, long rows) {
    if (!e.has("crc32c")) {
      return null;
    }
    long crc = f.crc(e, "crc32c", path);
    long batches = format == ShardFormat.DECODED_ARROW ? f.crc(e, "batches_crc32c", path) : -1;
    long first = f.index(e, "first_index", path);
    long last = f.index(e, "last_index", path);
    f.require(
        rows == 0 ? first == -1 && last == -1 : first >= 0 && last - first + 1 >= rows,
        "'" + path + "' holds " + rows + " rows but its stored indices are " + first + ".." + last);
    return new PartChecks(crc, batches, first, last);
  }

  /** Field access that names the manifest file and the field in every refusal. */
  private record Fields(JsonNode root, String file) {
    IllegalArgumentException invalid(String what) {
      return new IllegalArgumentException("Invalid preprocess manifest " + file + ": " + what);
    }

    void require(boolean ok, String what) {
      if (!ok) {
        throw invalid(what);
      }
    }

    String text(JsonNode n, String name) {
      require(n.path(name).isTextual(), "\"" + name + "\" is missing or not a string");
      return n.get(name).asText();
    }

    int integer(JsonNode n, String name) {
      require(
          n.path(name).isIntegralNumber() && n.get(name).canConvertToInt(),
          "\"" + name + "\" is missing or not an integer");
      return n.get(name).asInt();
    }

    JsonNode array(JsonNode n, String name) {
      require(n.path(name).isArray(), "\"" + name + "\" is missing or not an array");
      return n.get(name);
    }

    int positive(JsonNode n, String name) {
      require(
          n.isIntegralNumber() && n.canConvertToInt() && n.asInt() > 0,
          name + " is " + n + " (must be an integer > 0)");
      return n.asInt();
    }

    long crc(JsonNode n, String name, String path) {
      long crc = PartChecks.parseHex(n.path(name).isTextual() ? n.get(name).asText() : null);
      require(
          crc >= 0,
          "\""
              + name
              + "\" of '"
              + path
              + "' is "
              + (n.has(name) ? n.get(name).toString() : "missing")
              + " (must be 8 lowercase hex digits)");
      return crc;
    }

    long index(JsonNode n, String name, String path) {
      JsonNode v = n.path(name);
      require(
          v.isIntegralNumber() && v.canConvertToLong() && v.asLong() >= -1,
          "\"" + name + "\" of '" + path + "' is " + v + " (must be an integer >= -1)");
      return v.asLong();
    }

    long nonNegative(JsonNode n, String name, String path) {
      JsonNode v = n.path(name);
      require(
          v.canConvertToLong() && v.isIntegralNumber() && v.asLong() >= 0,
          "\"" + name + "\" of '" + path + "' is " + v + " (must be an integer >= 0)");
      return v.asLong();
    }
  }
}
