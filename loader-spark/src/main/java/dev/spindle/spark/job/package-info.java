/**
 * Jobs and the command line: {@link dev.spindle.spark.job.SpindleMain} (entry point of {@code
 * bin/spindle} and of {@code spark-submit --class}), the {@code gen-sample}, {@code preprocess} and
 * {@code demo} commands, and the session set-up (embedded {@code local[*]} on loopback, or a
 * cluster). Driver code plans and commits; {@link dev.spindle.spark.job.PreprocessTask} is what
 * runs in executors: the shared sample path ({@code dev.spindle.spark.samples}) over {@link
 * dev.spindle.spark.job.ShardSamples}, with committed Arrow files as its sink.
 */
package dev.spindle.spark.job;
