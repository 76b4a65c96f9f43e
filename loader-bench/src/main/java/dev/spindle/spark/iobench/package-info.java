/**
 * {@code bin/spindle bench io}: feeding from an object store, measured. {@link
 * dev.spindle.spark.iobench.CountingFileSystem} is the store: any Hadoop file system under the
 * {@code counted://} scheme, counting requests and bytes as an object store would bill them ({@code
 * CountedInputStream}) into the JVM-wide {@link dev.spindle.spark.iobench.StoreCounters}, with a
 * latency per request. {@link dev.spindle.spark.iobench.IoBench} runs on the caller's thread:
 *
 * <pre>
 *  IoCorpus (or --tars) ─► per round, per IoVariant: an embedded Spark session
 *     count the manifest ─► [warm epochs] ─► one measured epoch of feed (ContentDigest hashes
 *     every delivered batch) ─► StoreCounters' difference ─► IoSummary ─► JSON report
 * </pre>
 *
 * Feed tasks run on embedded Spark's task threads in this JVM, which is why the counters and the
 * digest see them.
 */
package dev.spindle.spark.iobench;
