package dev.spindle.spark.shard;

/** How the samples of a shard are stored. */
public enum ShardFormat {
  /**
   * A WebDataset-style tar: consecutive entries {@code KEY.ext} form one sample. A shard named
   * {@code .tar.gz} or {@code .tgz} is the same archive, gzip-compressed.
   */
  TAR,
  /** A class-per-folder image tree, {@code ROOT/<class>/<file>}; one shard is a run of its files. */
  IMAGE_FOLDER,
  /**
   * A Parquet file: each row is a sample, its encoded image in a binary column (or a struct's
   * {@code bytes} field) and its label in an integer column ({@link ParquetColumns}).
   */
  PARQUET
}
