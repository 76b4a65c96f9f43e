package dev.spindle.spark.shard;

/** How the samples of a shard are stored. */
public enum ShardFormat {
  /** A WebDataset-style tar: consecutive entries {@code KEY.ext} form one sample. */
  TAR,
  /** A class-per-folder image tree, {@code ROOT/<class>/<file>}; one shard is a run of its files. */
  IMAGE_FOLDER
}
