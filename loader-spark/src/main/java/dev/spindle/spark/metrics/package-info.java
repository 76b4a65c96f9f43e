/**
 * What jobs report: quarantined samples ({@link dev.spindle.spark.metrics.QuarantineRecord}) and
 * the JSON report with its one-line summary ({@link dev.spindle.spark.metrics.JobReport}).
 */
package dev.spindle.spark.metrics;
