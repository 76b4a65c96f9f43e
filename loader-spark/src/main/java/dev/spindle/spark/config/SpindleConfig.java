package dev.spindle.spark.config;

import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.batch.FieldType;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.image.OutputMode;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.plan.MixSpec;
import dev.spindle.spark.sink.OutputFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every {@code spark.spindle.*} key with its default and documentation: the one source of truth for
 * {@code conf/spark-defaults.conf.example} and the README's key table (a test compares them).
 * Values come from Spark configuration ({@code spark-defaults.conf}, {@code --conf}, the session
 * builder) or from CLI flags, which set the same keys.
 */
public final class SpindleConfig {
  private static final String PREFIX = "spark.spindle.";
  private static final Logger LOG = LoggerFactory.getLogger(SpindleConfig.class);
  private static final Map<String, ConfigKey<?>> KEYS = new LinkedHashMap<>();

  public static final ConfigKey<Integer> IMAGE_SIZE =
      register(
          "spark.spindle.image.size",
          "224",
          "Output image side: resize the short side, centre-crop a square (--size). A preprocess output read as input keeps its stored size: another value is refused",
          SpindleConfig::positiveInt);
  public static final ConfigKey<Long> IMAGE_MAX_PIXELS =
      register(
          "spark.spindle.image.maxPixels",
          Long.toString(ImageTransform.DEFAULT_MAX_PIXELS),
          "Images declaring more pixels are quarantined from their header, before decoding",
          SpindleConfig::positiveLong);
  public static final ConfigKey<Long> IMAGE_MAX_DECODE_BYTES =
      register(
          "spark.spindle.image.maxDecodeBytes",
          Long.toString(ImageTransform.DEFAULT_MAX_DECODE_BYTES),
          "Images whose decode would allocate more bytes are quarantined from their headers, before any allocation: bounds memory per decode thread. Counts the decoded pixels at the decode scale, decoder buffers (a progressive JPEG's coefficients), Spindle's copies and resample buffers: about 6.5 bytes a pixel for an upright baseline JPEG, 9.5 progressive, 12.7 when EXIF turns it",
          SpindleConfig::positiveLong);
  public static final ConfigKey<String> IMAGE_TRANSFORMS =
      register(
          "spark.spindle.image.transforms",
          "resize(SIZE),center_crop(SIZE)",
          "Transform chain in order (SIZE = spark.spindle.image.size): resize(S | H,W[,filter=bilinear|bicubic|box]), center_crop(S | H,W), crop(TOP,LEFT,H,W), random_resized_crop(S | H,W[,scale=0.08:1][,ratio=3/4:4/3]), hflip[(P)], normalize[(mean=R:G:B,std=R:G:B)] (last; bench only). Matches torchvision on PIL images. A preprocess output read as input is never transformed again: another chain than its own is refused",
          SpindleConfig::transformSpec);
  public static final ConfigKey<Boolean> IMAGE_EXIF_ORIENTATION =
      register(
          "spark.spindle.image.exifOrientation",
          "true",
          "Turn images upright by their EXIF orientation first (a JPEG's APP1, a PNG's eXIf, a WebP's EXIF chunk), as PIL's ImageOps.exif_transpose; a TIFF's orientation tag is applied either way, as Pillow applies it when loading",
          SpindleConfig::bool);
  public static final ConfigKey<Boolean> IMAGE_REDUCED_DECODE =
      register(
          "spark.spindle.image.reducedDecode",
          "false",
          "Decode JPEGs at 1/2, 1/4 or 1/8 scale when the first resize still gets its target resolution (faster; values differ slightly from torchvision's)",
          SpindleConfig::bool);
  public static final ConfigKey<Long> IMAGE_SEED =
      register(
          "spark.spindle.image.seed",
          "0",
          "Seed of random image operations; with the epoch and sample index it fixes every choice",
          SpindleConfig::anyLong);
  public static final ConfigKey<String> IMAGE_OUTPUT =
      register(
          "spark.spindle.image.output",
          "auto",
          "uint8-hwc, uint8-chw, float32-chw or float16-chw; auto = float32-chw after normalize, else uint8-hwc. Arrow output and feeding take uint8-hwc",
          SpindleConfig::outputMode);
  public static final ConfigKey<Integer> BATCH_SIZE =
      register(
          "spark.spindle.batchSize",
          "256",
          "Rows per Arrow record batch (--batch-size)",
          SpindleConfig::positiveInt);
  public static final ConfigKey<String> MAX_FAILURES =
      register(
          "spark.spindle.maxFailures",
          "0.01",
          "Failure budget: a count (10) or a fraction (0.01 or 1%) of samples that may be quarantined",
          SpindleConfig::failureBudgetText);
  public static final ConfigKey<Long> MAX_FAILURES_MIN_SAMPLES =
      register(
          "spark.spindle.maxFailures.minSamples",
          "100",
          "A fractional budget is applied to at least this many samples",
          SpindleConfig::positiveLong);
  public static final ConfigKey<Integer> MAX_SAMPLE_BYTES =
      register(
          "spark.spindle.maxSampleBytes",
          "67108864",
          "An encoded sample larger than this is quarantined, not read",
          SpindleConfig::positiveInt);
  public static final ConfigKey<Integer> NUM_CLASSES =
      register(
          "spark.spindle.numClasses",
          "0",
          "Number of classes when known: a sample whose label is not below it is quarantined (tar labels and image-folder class indices); 0 = unknown: any label from 0 to 2147483647",
          SpindleConfig::nonNegativeInt);
  public static final ConfigKey<FieldSet> FIELDS =
      register(
          "spark.spindle.fields",
          "",
          "The fields of a sample, comma-separated NAME=SOURCE[:TYPE] (--fields): SOURCE a tar member's extension (jpg, txt, cls, json, seg.png) or a Parquet column; TYPE one of "
              + FieldType.names()
              + " (default by extension: an image's is image; cls, label, index, id int64; txt, json string (json validated); else bytes). The field 'image' is the image column, 'label' the int32 label column (without one, labels are -100; without 'image' a sample has no image column, read by the spindle data source only); others are extra columns after image, label, key, index. Empty: image and label, as without fields",
          FieldSet::parse);
  public static final ConfigKey<Integer> FIELDS_MAX_BYTES =
      register(
          "spark.spindle.fields.maxBytes",
          "65536",
          "Bytes one string, bytes or list value of a declared field may hold: a sample with a larger one is quarantined",
          SpindleConfig::positiveInt);
  public static final ConfigKey<Integer> FOLDER_SHARD_FILES =
      register(
          "spark.spindle.folderShardFiles",
          "1000",
          "Files of an image-folder tree per shard",
          SpindleConfig::positiveInt);
  public static final ConfigKey<String> PARQUET_IMAGE_COLUMN =
      register(
          "spark.spindle.parquet.imageColumn",
          "image",
          "Parquet input: the column holding each row's encoded image, BINARY or a struct with a BINARY field 'bytes' (Hugging Face {bytes, path}) (--image-column)",
          SpindleConfig::columnName);
  public static final ConfigKey<String> PARQUET_LABEL_COLUMN =
      register(
          "spark.spindle.parquet.labelColumn",
          "label",
          "Parquet input: the integer column holding each row's label (--label-column)",
          SpindleConfig::columnName);
  public static final ConfigKey<Long> PARTITION_BYTES =
      register(
          "spark.spindle.partitionBytes",
          "268435456",
          "Consecutive small shards are grouped into one Spark partition up to this many bytes",
          SpindleConfig::positiveLong);
  public static final ConfigKey<Boolean> IO_CACHE =
      register(
          "spark.spindle.io.cache",
          "false",
          "Keep whole shard files on each executor's local disk once read (an LRU cache, checksummed, shared by the node's executors), so later epochs read the local copy instead of the object store or HDFS; a shard on file: is never cached. Set it when the session starts: executors read it from their Spark configuration",
          SpindleConfig::bool);
  public static final ConfigKey<Long> IO_CACHE_MAX_BYTES =
      register(
          "spark.spindle.io.cache.maxBytes",
          Long.toString(20L << 30),
          "Bound of the shard cache's folder in bytes: least recently used shards are deleted to stay within it; a shard larger than this is read without caching",
          SpindleConfig::positiveLong);
  public static final ConfigKey<String> IO_CACHE_DIR =
      register(
          "spark.spindle.io.cache.dir",
          "",
          "Local folder of the shard cache; empty = spindle-shard-cache under the first of Spark's local directories (SPARK_LOCAL_DIRS, else spark.local.dir), which outlives an application so a restarted executor or a later job on the node finds it",
          s -> s);
  public static final ConfigKey<Integer> THREADS =
      register(
          "spark.spindle.threads",
          "0",
          "CPU threads of the executor-wide pool all tasks share; 0 = the executor's cores (--threads). One rule for every job (preprocess, feed, train, the spindle data source): a task decodes on at most this many of the pool's threads (all of them when 0, never more than the pool has), keeping 4 samples in flight per thread",
          SpindleConfig::nonNegativeInt);
  public static final ConfigKey<Long> OUTPUT_STALE_LOCK_SECONDS =
      register(
          "spark.spindle.output.staleLockSeconds",
          "120",
          "The lease of a job's lock on its output (_spindle_lock.json): its driver renews it every sixth of this, and another job takes it over only after this long without renewal (or the holder's own lease, if longer), or at once when the holder's driver is gone and was certainly in this JVM's PID namespace (same host, kernel boot id and /proc/self/ns/pid); a job whose lock was taken over refuses to commit",
          SpindleConfig::positiveLong);
  public static final ConfigKey<OutputFormat> OUTPUT_FORMAT =
      register(
          "spark.spindle.output.format",
          "arrow",
          "File format of preprocess's output: arrow (Arrow IPC files, the image as arrow.fixed_shape_tensor) or parquet (the image as BINARY uint8 HWC pixels, its shape [H,W,C] in the key-value metadata spindle.image_shape) (--format)",
          OutputFormat::parse);
  public static final ConfigKey<Long> ARROW_MEMORY_LIMIT =
      register(
          "spark.spindle.memory.arrowLimit",
          "4294967296",
          "Byte limit of the executor's Arrow root allocator",
          SpindleConfig::positiveLong);

  public static final ConfigKey<Boolean> METRICS_PLUGIN =
      register(
          "spark.spindle.metrics.plugin",
          "true",
          "bin/spindle adds dev.spindle.spark.metrics.SpindlePlugin to spark.plugins (after any plugins already set), so Spark's metrics sinks export the executors' per-stage items, failures, blocked time, queue occupancy, busy fraction, quarantined samples and feeder counters; false leaves spark.plugins as it is. With spark-submit, set spark.plugins yourself",
          SpindleConfig::bool);
  public static final ConfigKey<String> TRACE_FILE =
      register(
          "spark.spindle.trace.file",
          "",
          "Write a Chrome trace-event JSON trace (Perfetto, chrome://tracing) of every pipeline stage to this local file: a span per item per stage on its thread's track, queue counters, a span per feeder copy. The driver (local mode) writes the file itself, each executor FILE.<executor id> on its own host. Needs spark.spindle.metrics.plugin (its executor plugin writes it); empty = no trace (--trace)",
          s -> s);
  public static final ConfigKey<Long> TRACE_MAX_SPANS =
      register(
          "spark.spindle.trace.maxSpans",
          "400000",
          "Item spans a trace file keeps at most (about 130 bytes each): all until half are written, then one in 2, one in 4 from three quarters, and so on",
          SpindleConfig::positiveLong);
  public static final ConfigKey<Long> SEED =
      register(
          "spark.spindle.seed",
          "0",
          "Seed of the epoch plans: shard order and window shuffle (--seed)",
          SpindleConfig::anyLong);
  public static final ConfigKey<Integer> SHUFFLE_WINDOW =
      register(
          "spark.spindle.shuffleWindow",
          "16384",
          "Samples per shuffle window of the epoch plan; 1 keeps each shard's order",
          SpindleConfig::positiveInt);
  public static final ConfigKey<String> FEED_REMAINDER =
      register(
          "spark.spindle.feed.remainder",
          "DROP_LAST",
          "What feed does with samples that do not fill a last round of world size x batch size: DROP_LAST, PAD or EXACT",
          SpindleConfig::remainderName);
  public static final ConfigKey<Integer> BATCH_TOKENS =
      register(
          "spark.spindle.batchTokens",
          "0",
          "Token budget of feed and train batches (--batch-tokens): a batch holds as many samples, in plan order, as fit both the batch size (now the most rows a batch may hold) and this many tokens in total of one list field's lengths (docs/guide/epochs.md, \"Token budgets\"); 0 = batches of batch size samples",
          SpindleConfig::nonNegativeInt);
  public static final ConfigKey<String> BATCH_TOKENS_FIELD =
      register(
          "spark.spindle.batchTokens.field",
          "",
          "The declared list<...> field whose lengths spark.spindle.batchTokens counts (--batch-tokens-field); empty = the one list field spark.spindle.fields declares",
          s -> s);
  public static final ConfigKey<String> MIX =
      register(
          "spark.spindle.mix",
          "",
          "A weighted mixture of data sets instead of one input: NAME=PROPORTION:URI entries separated by ';' (--mix, repeated). Proportions are positive and normalised by their sum; each epoch draws every batch's samples from the sources in those proportions (docs/guide/epochs.md, \"Mixing data sets\"); empty = the one --input",
          SpindleConfig::mixEntries);
  public static final ConfigKey<String> MIX_EPOCH =
      register(
          "spark.spindle.mix.epoch",
          "total",
          "Samples in one epoch of a mixture: total (the sources' samples together), samples:N, first-exhausted (until the first source would repeat) or all-exhausted (until every source was read whole; the others repeat) (--mix-epoch)",
          SpindleConfig::mixEpoch);
  public static final ConfigKey<Integer> FEED_PARTITIONS =
      register(
          "spark.spindle.feed.partitions",
          "0",
          "Spark partitions per epoch of feed; 0 = the default parallelism (--partitions)",
          SpindleConfig::nonNegativeInt);
  public static final ConfigKey<Integer> FEED_READ_BATCHES =
      register(
          "spark.spindle.feed.readBatches",
          "4",
          "Batches whose encoded samples a feed task reads in one pass over their shards",
          SpindleConfig::positiveInt);
  public static final ConfigKey<String> FEED_MANIFEST_CHANGED =
      register(
          "spark.spindle.feed.manifestChanged",
          "fail",
          "When the shards differ from the cached manifest: fail (naming the changes) or recount (list and count again, rewrite the cache)",
          SpindleConfig::manifestPolicy);
  public static final ConfigKey<Boolean> IO_INDEX =
      register(
          "spark.spindle.io.index",
          "true",
          "Read only a tar shard's planned samples, through the member index written when the manifest was counted (_spindle_index/ beside the manifest cache): coalesced ranged reads, never the members between them; false, or a shard without a usable index (compressed, damaged, a cache written before indexes), reads the shard in order up to its last planned sample",
          SpindleConfig::bool);
  public static final ConfigKey<Long> IO_COALESCE_BYTES =
      register(
          "spark.spindle.io.coalesceBytes",
          "32768",
          "Planned samples of a tar shard whose gap is at most this many bytes are read in one ranged read (the gap is read too); 0 = one read per sample. The default joins samples separated only by padding, metadata or small members, so an epoch reads about the data set once; a larger gap trades bytes for requests (1 MiB read 4.2x the data set at 0.21 requests per sample in bench io's run, docs/benchmarks.md)",
          SpindleConfig::nonNegativeLong);
  public static final ConfigKey<Integer> IO_CONCURRENCY =
      register(
          "spark.spindle.io.concurrency",
          "64",
          "Ranged reads of indexed tar shards in flight per executor (the size of its range-read pool): a read group's reads of all its shards start at once, so per-request latency (an object store's) overlaps; at 20 ms a request, 16 held bench io's two cores to 0.76x of local disk's rate (docs/benchmarks.md). Each read holds an HTTP connection of the file system's pool (S3A: fs.s3a.connection.maximum, 500 by default)",
          SpindleConfig::positiveInt);
  public static final ConfigKey<Boolean> FEED_SERVE =
      register(
          "spark.spindle.feed.serve",
          "false",
          "Serve PyTorch trainers: one task per rank (a barrier stage) streams the rank's batches into a feeder in its executor, which trainers on that node lease through the trainer bridge (--serve)",
          SpindleConfig::bool);
  public static final ConfigKey<String> FEED_DEVICE =
      register(
          "spark.spindle.feed.device",
          "auto",
          "Feeder device when serving: auto (the task's GPU from Spark's resources, else GPU 0, if CUDA has it; else host shared memory), cuda, or host (--device)",
          SpindleConfig::deviceName);
  public static final ConfigKey<String> FEED_SOCKET =
      register(
          "spark.spindle.feed.socket",
          "/tmp/spindle-{user}/bridge.sock",
          "Absolute path of the executor's trainer-bridge socket when serving; {user} = the executor's user, {rank} = the rank (one socket per rank: needed when several executors share a node), {pid} = the executor JVM's process id; train uses /tmp/spindle-{user}/train-{pid}.sock unless this is set. Directory made 0700, socket 0600 (--socket)",
          SpindleConfig::socketTemplate);
  public static final ConfigKey<Long> FEED_TRAINER_TIMEOUT =
      register(
          "spark.spindle.feed.trainerTimeoutSeconds",
          "600",
          "When serving, how long a rank task waits for its trainer to say hello, to take a batch, and to finish the rank's batches (--trainer-timeout)",
          SpindleConfig::positiveLong);
  public static final ConfigKey<Integer> FEED_SLOTS =
      register(
          "spark.spindle.feed.slots",
          "4",
          "Batches in flight in each serving feeder's ring (pinned host and device memory for this many batches)",
          SpindleConfig::slotCount);
  public static final ConfigKey<String> TRAIN_PYTHON =
      register(
          "spark.spindle.train.python",
          "python3",
          "train: the Python interpreter that runs each rank's training script on the executor's node, a command on the PATH or an absolute path (--python)",
          SpindleConfig::nonBlank);
  public static final ConfigKey<String> TRAIN_STATE_DIR =
      register(
          "spark.spindle.train.stateDir",
          "",
          "train: a Hadoop URI where each rank's loader state and exit are kept, read by a restarted rank wherever it runs; empty = a local temporary directory, which only local and local-cluster masters may use (--state-dir)",
          s -> s);
  public static final ConfigKey<Integer> TRAIN_MAX_RESTARTS =
      register(
          "spark.spindle.train.maxRestarts",
          "2",
          "train: how many times the ranks are restarted, each from the loader state it saved, after a trainer exits with an error or is killed (--max-restarts)",
          SpindleConfig::nonNegativeInt);
  public static final ConfigKey<Integer> TRAIN_NPROC_PER_EXECUTOR =
      register(
          "spark.spindle.train.nprocPerExecutor",
          "0",
          "train: the most ranks one executor may run; the job fails before any trainer starts if Spark placed more; 0 = no limit (--nproc-per-executor)",
          SpindleConfig::nonNegativeInt);
  public static final ConfigKey<Boolean> ALLOW_UNKNOWN_KEYS =
      register(
          "spark.spindle.allowUnknownKeys",
          "false",
          "An unknown spark.spindle.* key (a typo such as spark.spindle.batchsize) or spindle data source option is an error naming the closest valid one, before any work starts; true logs it as a warning and ignores it instead (a configuration written for a newer Spindle)",
          SpindleConfig::bool);

  private SpindleConfig() {}

  private static <T> ConfigKey<T> register(
      String key, String defaultValue, String doc, java.util.function.Function<String, T> parser) {
    ConfigKey<T> k = new ConfigKey<>(key, defaultValue, doc, parser);
    k.defaultParsed(); // a bad default fails at class load, not in a user's job
    KEYS.put(key, k);
    return k;
  }

  /** All keys in documentation order. */
  public static List<ConfigKey<?>> keys() {
    return Collections.unmodifiableList(new ArrayList<>(KEYS.values()));
  }

  /** The key named {@code name}, or null when there is none. */
  public static ConfigKey<?> key(String name) {
    return KEYS.get(name);
  }

  /**
   * Checks that every {@code spark.spindle.*} key in {@code settings} is known ({@link
   * #requireKnownKeys}), every value, and the settings that only make sense together (the image
   * transform, the failure budget).
   *
   * @throws IllegalArgumentException naming the unknown keys, or the first key whose value is not
   *     allowed
   */
  public static void validate(Map<String, String> settings) {
    Settings.of(settings);
  }

  /**
   * Reads a key from a map of settings (e.g. a SparkConf's), falling back to its default: for the
   * few checks made before a job's {@link Settings} exist (the command line's preflight).
   */
  public static <T> T get(Map<String, String> settings, ConfigKey<T> key) {
    String value = settings.get(key.key());
    return value == null ? key.defaultParsed() : key.parse(value);
  }

  /**
   * The image transform the settings describe, for epoch 0 ({@link ImageTransform#forEpoch} per
   * epoch): {@code spark.spindle.image.transforms} with SIZE replaced by {@code
   * spark.spindle.image.size}, its output ({@code spark.spindle.image.output}) and the other {@code
   * spark.spindle.image.*} keys; a key left out takes its default.
   *
   * @throws IllegalArgumentException naming the key when a value is invalid
   */
  public static ImageTransform imageTransform(Settings settings) {
    ImageTransform t = ImageTransform.parse(transformChain(settings));
    String output = settings.get(IMAGE_OUTPUT);
    if (!output.equals("auto")) {
      t = t.withOutput(OutputMode.parse(output));
    }
    return t.withMaxPixels(settings.get(IMAGE_MAX_PIXELS))
        .withMaxDecodeBytes(settings.get(IMAGE_MAX_DECODE_BYTES))
        .withExifOrientation(settings.get(IMAGE_EXIF_ORIENTATION))
        .withReducedDecode(settings.get(IMAGE_REDUCED_DECODE))
        .withSeed(settings.get(IMAGE_SEED));
  }

  /** {@link #imageTransform(Settings)} of what {@code settings} gives ({@link Settings#read}). */
  public static ImageTransform imageTransform(Map<String, String> settings) {
    return imageTransform(Settings.read(settings));
  }

  /**
   * The image transform the settings describe ({@link #imageTransform}), for jobs that write uint8
   * H×W×C Arrow batches (preprocess, feed, the data source).
   *
   * @throws IllegalArgumentException naming the key when a value is invalid or the chain's output
   *     is not uint8 HWC
   */
  public static ImageTransform uint8Transform(Settings settings) {
    ImageTransform t = imageTransform(settings);
    if (t.outputMode() != OutputMode.UINT8_HWC) {
      throw new IllegalArgumentException(
          "Invalid value for "
              + IMAGE_TRANSFORMS.key()
              + "/"
              + IMAGE_OUTPUT.key()
              + ": '"
              + transformChain(settings)
              + "' gives "
              + t.outputMode()
              + " (Arrow image batches hold uint8 HWC; normalize"
              + " belongs on the device or in bench images)");
    }
    return t;
  }

  /** {@link #uint8Transform(Settings)} of what {@code settings} gives ({@link Settings#read}). */
  public static ImageTransform uint8Transform(Map<String, String> settings) {
    return uint8Transform(Settings.read(settings));
  }

  /**
   * {@code spark.spindle.image.transforms} with SIZE replaced by {@code spark.spindle.image.size}.
   */
  private static String transformChain(Settings settings) {
    return settings
        .get(IMAGE_TRANSFORMS)
        .replace("SIZE", Integer.toString(settings.get(IMAGE_SIZE)));
  }

  /** Whether {@code key} is a Spindle key: one of this registry's. */
  public static boolean isKnown(String key) {
    return KEYS.containsKey(key);
  }

  /** The known key closest to {@code key}, ignoring case ({@link Nearest}). */
  public static String closest(String key) {
    return Nearest.among(key, KEYS.keySet());
  }

  /**
   * The unknown {@code spark.spindle.*} keys among {@code keys}, each as {@code Unknown key K (did
   * you mean N?)}; keys of other Spark components are never looked at.
   */
  public static List<String> unknownKeys(Iterable<String> keys) {
    List<String> unknown = new ArrayList<>();
    for (String key : keys) {
      if (key.startsWith(PREFIX) && !isKnown(key)) {
        unknown.add("Unknown key " + key + " (did you mean " + closest(key) + "?)");
      }
    }
    return unknown;
  }

  /**
   * Refuses unknown {@code spark.spindle.*} keys in {@code settings}, naming each with the closest
   * valid key: a misspelled setting would otherwise leave the job on a default. With {@code
   * spark.spindle.allowUnknownKeys=true} in the settings (for a configuration written for a newer
   * Spindle), each is logged as a warning instead.
   *
   * @throws IllegalArgumentException naming every unknown key and how to let them through
   */
  public static void requireKnownKeys(Map<String, String> settings) {
    List<String> unknown = unknownKeys(settings.keySet());
    if (unknown.isEmpty()) {
      return;
    }
    if (get(settings, ALLOW_UNKNOWN_KEYS)) {
      unknown.forEach(u -> LOG.warn("{}; ignored ({}=true)", u, ALLOW_UNKNOWN_KEYS.key()));
      return;
    }
    throw new IllegalArgumentException(unknownKeysMessage(unknown));
  }

  /**
   * One message for {@code unknown} (from {@link #unknownKeys}), saying how to let them through.
   */
  public static String unknownKeysMessage(List<String> unknown) {
    return String.join("; ", unknown)
        + ". A key of a newer Spindle? "
        + ALLOW_UNKNOWN_KEYS.key()
        + "=true turns this error into a warning";
  }

  private static String transformSpec(String s) {
    ImageTransform.parse(s.replace("SIZE", "224"));
    return s;
  }

  private static boolean bool(String s) {
    if (!s.equals("true") && !s.equals("false")) {
      throw new IllegalArgumentException("must be true or false");
    }
    return Boolean.parseBoolean(s);
  }

  private static String outputMode(String s) {
    if (!s.equals("auto")) {
      OutputMode.parse(s);
    }
    return s;
  }

  private static String nonBlank(String s) {
    if (s.isBlank()) {
      throw new IllegalArgumentException("must not be empty");
    }
    return s;
  }

  private static int positiveInt(String s) {
    return (int) integer(s, 1, Integer.MAX_VALUE, "an integer > 0");
  }

  private static int nonNegativeInt(String s) {
    return (int) integer(s, 0, Integer.MAX_VALUE, "an integer >= 0");
  }

  private static long positiveLong(String s) {
    return integer(s, 1, Long.MAX_VALUE, "an integer > 0");
  }

  private static long nonNegativeLong(String s) {
    return integer(s, 0, Long.MAX_VALUE, "an integer >= 0");
  }

  private static long anyLong(String s) {
    return integer(s, Long.MIN_VALUE, Long.MAX_VALUE, "an integer");
  }

  /** A whole number in [min, max]; anything else fails saying what is allowed. */
  private static long integer(String s, long min, long max, String allowed) {
    try {
      long v = Long.parseLong(s);
      if (v >= min && v <= max) {
        return v;
      }
    } catch (NumberFormatException e) {
      // the message below says what is allowed
    }
    throw new IllegalArgumentException("must be " + allowed);
  }

  private static String deviceName(String s) {
    String v = s.trim().toLowerCase(java.util.Locale.ROOT);
    if (!v.equals("auto") && !v.equals("cuda") && !v.equals("host")) {
      throw new IllegalArgumentException("must be auto, cuda or host");
    }
    return v;
  }

  private static String socketTemplate(String s) {
    if (!s.startsWith("/")) {
      throw new IllegalArgumentException("must be an absolute path");
    }
    if (s.replace("{user}", "u").replace("{rank}", "0").replace("{pid}", "4194304").length()
        > 100) {
      throw new IllegalArgumentException("must be under 100 bytes: a Unix socket path's limit");
    }
    return s;
  }

  private static int slotCount(String s) {
    return (int) integer(s, 2, Integer.MAX_VALUE, "an integer >= 2");
  }

  private static String remainderName(String s) {
    String v = s.trim().toUpperCase(java.util.Locale.ROOT);
    if (!v.equals("DROP_LAST") && !v.equals("PAD") && !v.equals("EXACT")) {
      throw new IllegalArgumentException("must be DROP_LAST, PAD or EXACT");
    }
    return v;
  }

  private static String mixEntries(String s) {
    if (!s.isBlank()) {
      MixSpec.parse(s, MixSpec.DEFAULT_EPOCH);
    }
    return s.trim();
  }

  private static String mixEpoch(String s) {
    MixSpec.parse("a=1:x", s);
    return s.trim().toLowerCase(java.util.Locale.ROOT);
  }

  private static String columnName(String s) {
    if (s.isEmpty()) {
      throw new IllegalArgumentException("must name a column");
    }
    return s;
  }

  private static String manifestPolicy(String s) {
    String v = s.trim().toLowerCase(java.util.Locale.ROOT);
    if (!v.equals("fail") && !v.equals("recount")) {
      throw new IllegalArgumentException("must be fail or recount");
    }
    return v;
  }

  private static String failureBudgetText(String s) {
    FailureBudget.parse(s, 1);
    return s;
  }
}
