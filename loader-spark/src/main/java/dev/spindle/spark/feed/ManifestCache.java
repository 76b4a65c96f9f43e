package dev.spindle.spark.feed;

import dev.spindle.spark.plan.FileFacts;
import dev.spindle.spark.plan.ManifestCheck;
import dev.spindle.spark.plan.ManifestCodec;
import dev.spindle.spark.shard.InputListing;
import dev.spindle.spark.shard.Manifest;
import dev.spindle.spark.shard.ShardCatalog;
import dev.spindle.spark.shard.ShardFormat;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manifest of the feed's input, counted once and cached as JSON: at {@code --manifest FILE},
 * or as {@code _spindle_manifest.json} inside an input folder (when it can be written there). A
 * cached manifest is reused while a fresh listing shows every shard with the recorded size and
 * modification time ({@link ManifestCheck}); otherwise the job fails naming the changes, or (with
 * {@code spark.spindle.feed.manifestChanged=recount}) lists and counts the input again and
 * rewrites the cache. Used by {@code feed} and the {@code spindle} DataSource. Driver thread.
 */
public final class ManifestCache {
  public static final String FILE_NAME = "_spindle_manifest.json";
  private static final Logger LOG = LoggerFactory.getLogger(ManifestCache.class);

  /**
   * The manifest and where it came from.
   *
   * @param manifest the manifest
   * @param location the cache file, or null when none could be used
   * @param status "created", "reused", "recounted", or "not cached: reason"
   */
  public record Loaded(Manifest manifest, String location, String status) {}

  private final Configuration hadoop;
  private final ShardCatalog catalog;
  private final ShardCatalog.TarCounter counter;

  public ManifestCache(
      Configuration hadoop, int folderShardFiles, ShardCatalog.TarCounter counter) {
    this.hadoop = hadoop;
    this.catalog = new ShardCatalog(hadoop, folderShardFiles);
    this.counter = counter;
  }

  /**
   * @param manifestFile the cache file, or null for the default next to the data
   * @param recount true to re-count changed data, false to refuse it
   */
  public Loaded load(String input, String manifestFile, boolean recount) throws IOException {
    Path cache = manifestFile != null ? new Path(manifestFile) : defaultLocation(input);
    FileSystem fs = cache == null ? null : cache.getFileSystem(hadoop);
    if (cache != null && fs.exists(cache)) {
      Manifest cached;
      try {
        cached = read(fs, cache);
      } catch (ManifestCodec.OutdatedException e) {
        LOG.warn("{} ({}); counting again", e.getMessage(), cache);
        return store(catalog.list(input, counter), fs, cache, "recounted: " + e.getMessage());
      }
      ManifestCheck check = ManifestCheck.compare(cached, listing(cached));
      if (check.unchanged()) {
        return new Loaded(cached, cache.toString(), "reused");
      }
      if (!recount) {
        throw new IllegalStateException(check.describe()
            + " (cached manifest " + cache + "; set spark.spindle.feed.manifestChanged=recount"
            + " to count again)");
      }
      LOG.warn("{}; counting again", check.describe());
      return store(catalog.list(input, counter), fs, cache, "recounted");
    }
    Manifest fresh = catalog.list(input, counter);
    return cache == null
        ? new Loaded(fresh, null, "not cached: the input is a single file; use --manifest")
        : store(fresh, fs, cache, "created");
  }

  private Path defaultLocation(String input) throws IOException {
    Path root = new Path(input);
    FileSystem fs = root.getFileSystem(hadoop);
    return fs.getFileStatus(root).isDirectory() ? new Path(root, FILE_NAME) : null;
  }

  private static Manifest read(FileSystem fs, Path cache) throws IOException {
    try (InputStream in = fs.open(cache)) {
      return ManifestCodec.read(in);
    } catch (ManifestCodec.OutdatedException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new IOException("Cannot use the cached manifest " + cache + ": " + e.getMessage()
          + " (delete it to count again)", e);
    }
  }

  /** Writes the manifest beside a temporary name and renames it; a read-only place is no error. */
  private static Loaded store(Manifest m, FileSystem fs, Path cache, String status) {
    Path temp = new Path(cache.getParent(), "_" + cache.getName() + ".tmp");
    try {
      try (OutputStream out = fs.create(temp, true)) {
        ManifestCodec.write(m, out);
      }
      fs.delete(cache, false);
      if (!fs.rename(temp, cache)) {
        throw new IOException("rename " + temp + " to " + cache + " failed");
      }
      return new Loaded(m, cache.toString(), status);
    } catch (IOException e) {
      LOG.warn("Cannot cache the manifest at {}: {}", cache, e.toString());
      return new Loaded(m, null, "not cached: " + e.getMessage());
    }
  }

  /** The data files under the manifest's input, as the catalog would take them. */
  private List<FileFacts> listing(Manifest cached) throws IOException {
    Path root = new Path(cached.input());
    FileSystem fs = root.getFileSystem(hadoop);
    boolean tars = cached.shards().isEmpty()
        || cached.shards().get(0).format() == ShardFormat.TAR;
    List<FileFacts> out = new ArrayList<>();
    if (!fs.exists(root)) {
      return out;
    }
    FileStatus status = fs.getFileStatus(root);
    if (status.isFile()) {
      out.add(facts(status));
      return out;
    }
    for (FileStatus f : InputListing.list(fs, status.getPath()).files()) {
      String name = f.getPath().getName().toLowerCase(Locale.ROOT);
      if (tars ? name.endsWith(".tar") : isImage(name)) {
        out.add(facts(f));
      }
    }
    return out;
  }

  private static FileFacts facts(FileStatus f) {
    return new FileFacts(f.getPath().toString(), f.getLen(), f.getModificationTime());
  }

  private static boolean isImage(String name) {
    return name.endsWith(".jpg") || name.endsWith(".jpeg") || name.endsWith(".png");
  }
}
