/**
 * Live progress of a running job, cluster-wide:
 *
 * <pre>
 *  executor task threads and the sample path's statistics thread (samples as they leave decode)
 *    ─► TaskProgress ─► ProgressCounters (named LongAccumulators: samples, bytes, quarantined)
 *    ─► heartbeats (running tasks) and task ends ─► driver: ProgressListener (a SparkListener)
 *    ─► ProgressPrinter thread ─► stderr: one live line (terminal) or a plain line every N s
 * </pre>
 *
 * A job names itself and its total for the UI and for the listener through {@link
 * dev.spindle.spark.progress.JobLabel}. The counters are the only part executors touch.
 */
package dev.spindle.spark.progress;
