/**
 * Configuration: every {@code spark.spindle.*} key with its default, documentation and parser, in
 * one place ({@link dev.spindle.spark.config.SpindleConfig}, the image keys included); the example
 * configuration file and the key table of {@code docs/reference/config.md} are rendered from it
 * ({@link dev.spindle.spark.config.ConfigDocs}).
 *
 * <p>One typed path: on the driver a job's settings (the session's, then the job's own) are checked
 * and parsed once into {@link dev.spindle.spark.config.Settings}; the job turns them into the typed
 * records its tasks carry ({@code PreprocessSettings}, {@code FeedSettings}, {@code ServeSettings},
 * {@code ScanSettings}, each built on {@code samples.SampleSettings}, which holds the batch size
 * and the one rule for a task's threads). No map of settings goes to an executor. Imports {@code
 * image}, {@code pipeline}, {@code shard} and {@code sink} for the values it parses into; nothing
 * below it imports it.
 */
package dev.spindle.spark.config;
