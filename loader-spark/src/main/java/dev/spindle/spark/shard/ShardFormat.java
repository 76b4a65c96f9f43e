package dev.spindle.spark.shard;

/** How the samples of a shard are stored. */
public enum ShardFormat {
  /**
   * A WebDataset-style tar: consecutive entries {@code KEY.ext} form one sample. A shard named
   * {@code .tar.gz} or {@code .tgz} is the same archive, gzip-compressed.
   */
  TAR,
  /**
   * A class-per-folder image tree, {@code ROOT/<class>/<file>}; one shard is a run of its files.
   */
  IMAGE_FOLDER,
  /**
   * A Parquet file: each row is a sample, its encoded image in a binary column (or a struct's
   * {@code bytes} field) and its label in an integer column ({@link ParquetColumns}).
   */
  PARQUET,
  /**
   * A part file of a {@code preprocess} output in Arrow IPC file format ({@code arrow-ipc-file}):
   * each row an already decoded sample, {@code image} a fixed-size list of H·W·C uint8 pixels
   * ({@code arrow.fixed_shape_tensor}), {@code label}, {@code key}, {@code index}. Listed by the
   * output's {@code _manifest.json} ({@link dev.spindle.spark.manifest.PreprocessedInput}).
   */
  DECODED_ARROW,
  /**
   * A part file of a {@code preprocess} output in Parquet: each row an already decoded sample,
   * {@code image} BINARY of H·W·C uint8 pixels, {@code label}, {@code key}, {@code index}. Listed
   * by the output's {@code _manifest.json} ({@link dev.spindle.spark.manifest.PreprocessedInput}).
   */
  DECODED_PARQUET;

  /** True for the part files of a {@code preprocess} output, whose rows hold decoded pixels. */
  public boolean decoded() {
    return this == DECODED_ARROW || this == DECODED_PARQUET;
  }
}
