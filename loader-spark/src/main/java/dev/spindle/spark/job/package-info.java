/**
 * The {@code preprocess} job and the dataset tools around it: {@link
 * dev.spindle.spark.job.PreprocessJob} (driver: lists and counts the shards, partitions them,
 * commits the output) and {@link dev.spindle.spark.job.PreprocessTask} (what runs in executors: the
 * shared sample path over {@link dev.spindle.spark.job.ShardSamples}, committed files as its sink),
 * {@link dev.spindle.spark.job.GenSample} (a synthetic dataset), and what several jobs share
 * (shipping the Hadoop configuration, counting tar shards on the cluster). Users reach the job
 * through the public API ({@link dev.spindle.Spindle#preprocess}); the command line lives in {@code
 * dev.spindle.spark.cli}.
 */
package dev.spindle.spark.job;
