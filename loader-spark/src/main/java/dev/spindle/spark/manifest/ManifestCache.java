package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.BracePattern;
import dev.spindle.spark.shard.FileCount;
import dev.spindle.spark.shard.InputListing;
import dev.spindle.spark.shard.InputTree;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.PatternFiles;
import dev.spindle.spark.shard.PatternInput;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import dev.spindle.spark.shard.SkippedInputs;
import dev.spindle.spark.shard.TarIndexes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manifest of the feed's input, counted once and cached as JSON with a compact binary form
 * beside it ({@link ManifestFiles}: the JSON is authoritative, the binary form is what is read
 * while it stands for that JSON): at {@code --manifest FILE} (and {@code FILE.bin}, without a
 * {@code .json}), or as {@code _spindle_manifest.json} and {@code _spindle_manifest.bin} inside an
 * input folder (when they can be written there). The cache is bound to the input it is used for,
 * not to the one it was written for: its shard paths are relative, so they are taken under the
 * requested input (a copied or moved data set), and it is reused only while a fresh look at that
 * input (a listing of its folder, or of the folders its brace pattern's names fall in: {@link
 * PatternFiles}, no request per shard) shows every shard with the recorded size and modification
 * time and no other ({@link ManifestCheck}); otherwise the job fails naming the changes and both
 * inputs, or (with {@code spark.spindle.feed.manifestChanged=recount}) counts the input again and
 * rewrites the cache. A cache whose Parquet columns differ from the configured ones is counted
 * again; one whose JSON was edited since it was written (its shards no longer hash to the
 * fingerprint it records: {@link ManifestCodec.EditedException}) is refused like a changed input,
 * or counted again with {@code recount}. A {@code preprocess} output is neither counted nor cached:
 * its own {@code _manifest.json}, the commit record, is the manifest ({@link PreprocessedInput}),
 * and its part files are checked against it (size, rows) when they are opened. Used by {@code feed}
 * and the {@code spindle} DataSource. Driver thread.
 */
public final class ManifestCache {
  public static final String FILE_NAME = "_spindle_manifest.json";

  /** The status of a preprocess output's manifest: read as committed, never counted or cached. */
  public static final String PREPROCESSED =
      "preprocess output: its _manifest.json lists the"
          + " files and rows (nothing counted, nothing cached)";

  /** The folder of the member indexes beside a default cache ({@link #FILE_NAME}). */
  public static final String INDEX_FOLDER = "_spindle_index";

  /** A reused cache's index status: its files are checked when their shards are read. */
  static final String REUSED_INDEX =
      "reused: each shard's index is checked against the shard when it is read; a cache written"
          + " before member indexes has none (the report's io.shard_opens_indexed stays 0): delete"
          + " the cache to count again and write them";

  private static final Logger LOG = LoggerFactory.getLogger(ManifestCache.class);

  /**
   * The manifest and where it came from.
   *
   * @param manifest the manifest
   * @param location the cache file, or null when none could be used
   * @param status "created", "reused", "reused (written for INPUT)", "recounted", "recounted:
   *     reason", or "not cached: reason"
   * @param skipped the files of the input folder that are no data, and why ({@link InputTree})
   */
  public record Loaded(
      Manifest manifest,
      String location,
      String status,
      List<InputListing.Skipped> skipped,
      TarIndexes indexes,
      String indexStatus) {
    public Loaded {
      skipped = List.copyOf(skipped);
    }

    /** Loaded without member indexes. */
    public Loaded(
        Manifest manifest, String location, String status, List<InputListing.Skipped> skipped) {
      this(manifest, location, status, skipped, null, null);
    }

    /** Loaded from where nothing was skipped: a file, a brace pattern, a preprocess output. */
    public Loaded(Manifest manifest, String location, String status) {
      this(manifest, location, status, List.of());
    }

    /**
     * The report's {@code manifest} entry: location, status, shards and samples, and where the tar
     * shards' member indexes are ({@code index}: location and status; null when the input has no
     * tar shards).
     */
    public Map<String, Object> reportEntry() {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("location", location);
      entry.put("status", status);
      entry.put("shards", manifest.shards().size());
      entry.put("samples", manifest.totalSamples());
      if (indexStatus == null) {
        entry.put("index", null);
      } else {
        Map<String, Object> index = new LinkedHashMap<>();
        index.put("location", indexes == null ? null : indexes.root());
        index.put("status", indexStatus);
        entry.put("index", index);
      }
      return entry;
    }
  }

  private final Configuration hadoop;
  private final ShardCatalog catalog;
  private final ParquetColumns columns;
  private final ShardCatalog.Counter counter;
  private String indexRoot; // of the load in progress

  public ManifestCache(
      Configuration hadoop,
      int folderShardFiles,
      ParquetColumns columns,
      ShardCatalog.Counter counter) {
    this.hadoop = hadoop;
    this.catalog = new ShardCatalog(hadoop, folderShardFiles, columns);
    this.columns = columns;
    this.counter = counter;
  }

  /**
   * @param manifestFile the cache file, or null for the default next to the data
   * @param recount true to re-count changed data, false to refuse it
   */
  public Loaded load(String input, String manifestFile, boolean recount) throws IOException {
    Manifest preprocessed = PreprocessedInput.manifest(hadoop, input);
    if (preprocessed != null) {
      if (manifestFile != null) {
        LOG.warn(
            "The manifest cache {} is not used: {} is a preprocess output, whose {} lists"
                + " its files and rows",
            manifestFile,
            input,
            PreprocessedInput.MANIFEST);
      }
      return new Loaded(
          preprocessed, preprocessed.input() + "/" + PreprocessedInput.MANIFEST, PREPROCESSED);
    }
    Path cache = manifestFile != null ? new Path(manifestFile) : defaultLocation(input);
    FileSystem fs = cache == null ? null : cache.getFileSystem(hadoop);
    indexRoot = cache == null ? null : indexRoot(cache, manifestFile != null);
    if (cache == null || !fs.exists(cache)) {
      Manifest fresh = catalog.list(input, counter, indexRoot);
      if (cache != null) {
        return store(fresh, fs, cache, "created");
      }
      String why =
          "the input is "
              + (BracePattern.isPattern(input) ? "a brace pattern" : "a single file")
              + "; use --manifest";
      return new Loaded(
          fresh,
          null,
          "not cached: " + why,
          catalog.skipped(),
          null,
          hasTars(fresh) ? "none: the manifest is not cached (" + why + ")" : null);
    }
    Manifest written;
    try {
      written = ManifestFiles.read(fs, cache);
    } catch (ManifestCodec.OutdatedException e) {
      LOG.warn("{} ({}); counting again", e.getMessage(), cache);
      return store(
          catalog.list(input, counter, indexRoot), fs, cache, "recounted: " + e.getMessage());
    } catch (ManifestCodec.EditedException e) {
      return edited(e, input, fs, cache, recount);
    }
    String otherColumns = otherColumns(written);
    if (otherColumns != null) {
      LOG.warn("{} ({}); counting again", otherColumns, cache);
      return store(
          catalog.list(input, counter, indexRoot), fs, cache, "recounted: " + otherColumns);
    }
    String here = located(input);
    Manifest cached = here.equals(written.input()) ? written : written.rebased(here);
    Looked looked = look(cached);
    ManifestCheck check = ManifestCheck.compare(cached, looked.files());
    if (check.unchanged()) {
      SkippedInputs.log(input, looked.skipped());
      return new Loaded(
          cached,
          cache.toString(),
          cached == written ? "reused" : "reused (written for " + written.input() + ")",
          looked.skipped(),
          hasTars(cached) ? new TarIndexes(indexRoot, cached.base()) : null,
          hasTars(cached) ? REUSED_INDEX : null);
    }
    String where =
        " (cached manifest "
            + cache
            + (cached == written
                ? ""
                : ", written for " + written.input() + ", checked against the input " + here)
            + ")";
    if (!recount) {
      throw new IllegalStateException(
          check.describe()
              + where
              + "; set spark.spindle.feed.manifestChanged=recount to count again");
    }
    LOG.warn("{}{}; counting again", check.describe(), where);
    return store(catalog.list(input, counter, indexRoot), fs, cache, "recounted");
  }

  /**
   * A cache whose JSON was edited since it was written: its sample counts cannot be trusted (a
   * lowered count would leave samples out of every plan, unseen), so the job fails naming it, or
   * with {@code recount} counts the input again.
   */
  private Loaded edited(
      ManifestCodec.EditedException e, String input, FileSystem fs, Path cache, boolean recount)
      throws IOException {
    String what = e.getMessage() + " (cached manifest " + cache + ")";
    if (!recount) {
      throw new IllegalStateException(
          what + "; set spark.spindle.feed.manifestChanged=recount to count again", e);
    }
    LOG.warn("{}; counting again", what);
    return store(
        catalog.list(input, counter, indexRoot), fs, cache, "recounted: " + e.getMessage());
  }

  private Path defaultLocation(String input) throws IOException {
    if (BracePattern.isPattern(input)) {
      return null;
    }
    Path root = new Path(input);
    FileSystem fs = root.getFileSystem(hadoop);
    return fs.getFileStatus(root).isDirectory() ? new Path(root, FILE_NAME) : null;
  }

  /** Why the written manifest's Parquet columns are not the configured ones, or null. */
  private String otherColumns(Manifest written) {
    for (Shard s : written.shards()) {
      if (s.columns() != null && !s.columns().equals(columns)) {
        return "the manifest was counted for Parquet columns " + s.columns() + "; now " + columns;
      }
    }
    return null;
  }

  /** The input as the catalog records it: qualified (a brace pattern's folder part). */
  private String located(String input) throws IOException {
    if (BracePattern.isPattern(input)) {
      return PatternInput.locate(input, hadoop);
    }
    Path root = new Path(input);
    try {
      return root.getFileSystem(hadoop).getFileStatus(root).getPath().toString();
    } catch (java.io.FileNotFoundException e) {
      throw new java.io.FileNotFoundException("Input does not exist: " + input);
    }
  }

  /**
   * Writes the cache (JSON and binary form) of a manifest the catalog just counted; a read-only
   * place is no error.
   */
  private Loaded store(Manifest m, FileSystem fs, Path cache, String status) {
    try {
      ManifestFiles.write(fs, cache, m);
      return new Loaded(
          m, cache.toString(), status, catalog.skipped(), catalog.indexes(), catalog.indexStatus());
    } catch (IOException e) {
      LOG.warn(
          "Cannot cache the manifest at {}: {}; its tar shards are read without member indexes",
          cache,
          e.toString());
      return new Loaded(
          m,
          null,
          "not cached: " + e.getMessage(),
          catalog.skipped(),
          null,
          hasTars(m)
              ? "none: the manifest cache cannot be written (" + e.getMessage() + ")"
              : null);
    }
  }

  /**
   * The folder of the member indexes beside the cache {@code cache}: {@code DIR/_spindle_index} for
   * the default {@code DIR/_spindle_manifest.json}, {@code FILE.index} for {@code --manifest FILE}.
   */
  static String indexRoot(Path cache, boolean named) {
    return named
        ? cache.toString() + ".index"
        : new Path(cache.getParent(), INDEX_FOLDER).toString();
  }

  private static boolean hasTars(Manifest m) {
    return m.shards().stream().anyMatch(s -> s.format() == ShardFormat.TAR);
  }

  /** The data files of an input as they are now, and the files that are no data. */
  private record Looked(List<FileFacts> files, List<InputListing.Skipped> skipped) {}

  /**
   * The data files of the manifest's input as the catalog would take them now: the layout of its
   * folder ({@link InputTree}, which refuses a folder that became a mix of layouts), the file
   * itself, or the files its brace pattern names (found by listing their folders: {@link
   * PatternFiles}).
   */
  private Looked look(Manifest cached) throws IOException {
    List<FileFacts> out = new ArrayList<>();
    if (BracePattern.isPattern(cached.input())) {
      PatternInput pattern = PatternInput.expand(cached.input(), hadoop);
      PatternFiles.Looked looked = PatternFiles.look(pattern.uris(), hadoop);
      LOG.info(
          "Checked the {} files of {}: {} folders listed ({} entries), {} files looked at"
              + " one by one",
          pattern.uris().size(),
          cached.input(),
          looked.foldersListed(),
          looked.entriesListed(),
          looked.filesStatted());
      for (FileCount f : looked.files()) {
        if (f.refused() == null) {
          out.add(new FileFacts(f.uri(), f.bytes(), f.modificationTime()));
        }
      }
      return new Looked(out, List.of());
    }
    Path root = new Path(cached.input());
    FileSystem fs = root.getFileSystem(hadoop);
    if (!fs.exists(root)) {
      return new Looked(out, List.of());
    }
    FileStatus status = fs.getFileStatus(root);
    if (status.isFile()) {
      out.add(facts(status));
      return new Looked(out, List.of());
    }
    InputTree tree =
        InputTree.of(cached.input(), status.getPath(), InputListing.list(fs, status.getPath()));
    if (tree == null) {
      return new Looked(out, List.of());
    }
    for (FileStatus f : tree.files()) {
      out.add(facts(f));
    }
    return new Looked(out, tree.skipped());
  }

  private static FileFacts facts(FileStatus f) {
    return new FileFacts(f.getPath().toString(), f.getLen(), f.getModificationTime());
  }
}
