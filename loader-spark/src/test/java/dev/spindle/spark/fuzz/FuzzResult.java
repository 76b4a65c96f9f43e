package dev.spindle.spark.fuzz;

import java.util.List;

/**
 * What one fuzzing run of a target did, from libFuzzer's output. Immutable.
 *
 * @param target the target's name
 * @param executions inputs run (libFuzzer's {@code number_of_executed_units})
 * @param execsPerSecond average over the run
 * @param seconds wall time of the run
 * @param seedCoverage coverage counters hit by the seed corpus ({@code cov} at INITED)
 * @param coverage coverage counters hit at the end ({@code cov} at DONE)
 * @param features libFuzzer's features at the end ({@code ft}: edges with hit counts, compares)
 * @param newUnits inputs the run added to the corpus for new coverage
 * @param corpusSize inputs in the corpus at the end
 * @param peakRssMb the fuzzing JVM's peak resident memory
 * @param crashes findings written (crash, timeout, out-of-memory inputs), and a JVM that died
 * @param crashFiles the inputs of those findings
 * @param exitCode the fuzzing JVM's exit code
 * @param log the run's log file
 */
public record FuzzResult(
    String target,
    long executions,
    long execsPerSecond,
    double seconds,
    long seedCoverage,
    long coverage,
    long features,
    long newUnits,
    long corpusSize,
    long peakRssMb,
    int crashes,
    List<String> crashFiles,
    int exitCode,
    String log) {

  /** Coverage gained over the seed corpus. */
  public long newCoverage() {
    return coverage - seedCoverage;
  }
}
