/**
 * The feeder: Arrow batches in, leased device batches out, one feeder per GPU per JVM.
 *
 * <pre>
 *   producer threads (the feed job's tasks)      copy thread "spindle-feeder-copy-cudaN"
 *   GpuFeeder.offer(VectorSchemaRoot) ──► ring ──► H2D copy + normalise + event ──► ring
 *     (BatchWriter: memcpy into a pinned slot)                                        │
 *   GpuFeeder.claimSlot() ─► SlotWriter: rows written in place, then publish ──► ring    │
 *   trainers: try (DeviceBatch b = feeder.next(timeout)) { … }  ◄─────────────────────┘
 *   GpuFeeders: JVM-wide registry keyed by device ordinal     FeederStats: the job report
 * </pre>
 *
 * <p>Enters: {@code VectorSchemaRoot}s with columns {@code image} (FixedSizeList&lt;uint8&gt;,
 * optionally as extension type storage), {@code label}, {@code key}, {@code index}, then the
 * feeder's extra fields ({@link dev.spindle.gpu.feed.SlotField}, fixed in {@link
 * dev.spindle.gpu.feed.FeederConfig#fields()}: numbers, text, bytes, lists, written into their own
 * region of each slot by {@code FieldWriter}); the caller keeps them. Leaves: {@link
 * dev.spindle.gpu.feed.DeviceBatch} leases, views of feeder-owned device memory valid until closed.
 * Threads: producers and consumers are the caller's; the feeder runs one copy thread, the only one
 * that drives the device stream.
 *
 * <p>The benchmark, {@code FeederBench} (ring against bare-copy bandwidth, a consumer's wait), is
 * in the loader-bench module, in a package of this name.
 */
package dev.spindle.gpu.feed;
