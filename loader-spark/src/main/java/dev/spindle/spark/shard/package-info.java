/**
 * Shards: where samples come from.
 *
 * <pre>
 *  input URI ──► InputListing, InputTree (one layout per folder), FolderTree (torchvision's
 *   or pattern   ImageFolder), BracePattern/PatternInput, SkippedInputs; ShardFiles counts a file
 *                (tar headers, Parquet footers) ──► what dev.spindle.spark.manifest's ShardCatalog
 *                makes a Manifest of
 *  Shard ──► ShardReader.open ──► TarShardReader (.tar; gzip, xz, bzip2, zstd: TarCompression,
 *                                 DecompressedStream)
 *            (task thread)      | ParquetShardReader (ParquetLayout → ParquetRows)
 *                               | ImageFolderReader   ──► Sample (encoded bytes)
 *                               | DecodedArrowReader, DecodedParquetReader (a preprocess
 *                                 output's part files) ──► Sample (stored pixels, StoredRows)
 *                                 (one thread per reader, through the FileSystem API;
 *                                 HadoopConf ships the Hadoop configuration to executors)
 *  Shard + planned positions + IoSettings ──► ShardReader.open(…, IoCounters)
 *            an uncompressed tar with a usable member index (TarIndex, written while counting;
 *            TarIndexFiles: the files, an executor-wide LRU of them): IndexedTarReader, only the
 *            planned samples' byte ranges, coalesced, read at once on RangeReadPool's threads
 *            (spark.spindle.io.concurrency per executor; from the shard cache's local copy when
 *            it holds the shard), each parsed by TarSampleCursor alone; any other shard as
 *            above, its storage stream counted (CountingStream)
 *  a tar shard's stream ──► ShardCache.open: with spark.spindle.io.cache, the shard's whole copy on
 *                           the node's disk (CacheDir: fetched once, CRC-32C, LRU within its
 *                           bound, locked across tasks and executors; CachedFileStream), else the
 *                           storage's stream; CacheCounts say what it did ──► the reader's
 *                           cacheCounts()
 * </pre>
 *
 * <p>Enters: a Hadoop FileSystem URI ({@code file://}, {@code hdfs://}, {@code s3a://}, …), or a
 * brace pattern of them. Leaves: listings and per-file counts on the driver (the {@link
 * dev.spindle.spark.manifest} package makes a Manifest of them); {@link
 * dev.spindle.spark.shard.Sample}s, in stored order, on the thread that reads a shard. A sample's
 * dataset index is {@code manifest.offsets()[shard] + sample.position()}. Nothing is decoded here
 * (a preprocess output's rows hold pixels that were decoded when they were stored); a sample that
 * cannot be used (no image, no label, a label outside {@code LabelRule}, too large, a repeated key)
 * carries a problem text instead of being dropped, so the caller can quarantine it with its shard
 * and key. A tar's damage is its last sample, key {@code (rest of shard)}; a Parquet sample's key
 * is {@code <file name>#<row>}. A file that cannot be a shard at all (a missing pattern name, an
 * unusable Parquet footer or schema) is refused while counting ({@link
 * dev.spindle.spark.shard.ShardRefusedException}), naming it. Counting (the manifest) and reading
 * walk a tar through one parser, {@code TarSampleCursor}, so a shard's count is exactly the number
 * of samples its reader yields, whatever its bytes; the same walk records each sample's byte range
 * ({@code TarIndex}), so a range read alone yields exactly the sample a walk of the whole shard
 * does. To check a cached manifest of a brace pattern, {@code PatternFiles} finds the named files'
 * sizes and modification times by listing their folders, not by a request per file.
 */
package dev.spindle.spark.shard;
