/**
 * Shards: where samples come from.
 *
 * <pre>
 *  input URI ──► ShardCatalog (driver: Hadoop FileSystem listing, tar headers counted once)
 *                    │  Manifest = shards in path order + sample counts (+ class names)
 *                    ▼
 *  Shard ──► ShardReader.open ──► TarShardReader | ImageFolderReader ──► Sample (encoded bytes)
 *            (task thread)         (one thread per reader, streams through the FileSystem API)
 * </pre>
 *
 * <p>Enters: a Hadoop FileSystem URI ({@code file://}, {@code hdfs://}, {@code s3a://}, …).
 * Leaves: {@link dev.spindle.spark.shard.Manifest} on the driver; {@link
 * dev.spindle.spark.shard.Sample}s, in stored order, on the thread that reads a shard. A sample's
 * dataset index is {@code manifest.offsets()[shard] + sample.position()}. Nothing is decoded here;
 * a sample that cannot be used (no image, no label, a label outside {@code LabelRule}, too large,
 * a repeated key) carries a problem text instead of being dropped, so the caller can quarantine it
 * with its shard and key. A tar's damage is its last sample, key {@code (rest of shard)}. Counting
 * (the manifest) and reading walk a tar through one parser, {@code TarSampleCursor}, so a shard's
 * count is exactly the number of samples its reader yields, whatever its bytes.
 */
package dev.spindle.spark.shard;
