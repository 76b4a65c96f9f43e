/**
 * What jobs report: quarantined samples ({@link dev.spindle.spark.metrics.QuarantineRecord}), the
 * JSON report with its one-line summary ({@link dev.spindle.spark.metrics.JobReport}), its
 * throughput over time ({@link dev.spindle.spark.metrics.TaskTimeline}, a driver-side Spark
 * listener, bucketed by {@link dev.spindle.spark.metrics.Timeline}), and the report as one HTML
 * page ({@link dev.spindle.spark.metrics.ReportPage}, with Chart.js and the page's template and
 * script under {@code resources/dev/spindle/spark/metrics/report/}).
 */
package dev.spindle.spark.metrics;
