/**
 * The soak ({@code bin/spindle bench soak}): a long {@code feed --serve} run with real Python
 * trainers, sampled for growth. {@link dev.spindle.spark.soak.SoakBench} runs it on the caller's
 * thread: a generated dataset in, the feed job on a thread of its own, two trainer processes
 * ({@code soak_trainer.py}), {@code Sampler} reading {@code Probes} ({@code /proc}, the JVM's
 * beans, the Arrow root) into {@code SoakSeries}, and {@code EndState} after the session stopped;
 * the report's fields out.
 */
package dev.spindle.spark.soak;
