/**
 * The manifest: what an input holds, counted once on the driver, kept beside the data and checked
 * before it is trusted again. Every plan ({@link dev.spindle.spark.plan}) is a function of it.
 *
 * <pre>
 *  input URI ──► ShardCatalog (driver: InputListing, then InputTree: one layout per folder, or
 *   or pattern       │  an error naming the files of each kind; an image folder is FolderTree,
 *                    │  torchvision's ImageFolder, cut into shards by FolderManifest; what is no
 *                    │  data is SkippedInputs; or a BracePattern's names;
 *                    │  tar headers / Parquet footers counted once, by a Counter: on the driver's
 *                    │  thread, or ClusterShardCounter's Spark job; ShardFiles says how per file
 *                    │  kind; a preprocess output: PreprocessedInput reads its _manifest.json,
 *                    │  nothing is counted)
 *                    ▼
 *  Manifest = shards in path order + sample counts (+ class names, + StoredImages for a preprocess
 *             output); EmptyShards says why one that holds no sample at all holds none
 *  ManifestCache (driver): the cached _spindle_manifest.json (ManifestCodec) or its binary form
 *    (ManifestBinary: ManifestColumns, FrontCodedNames, BinaryIn/BinaryOut, Wtf8; ManifestFiles
 *    picks and writes them) ─► ManifestCheck against a fresh (uri, size, mtime) listing (FileFacts;
 *    a brace pattern's through PatternFiles) ─► the cached manifest, or counted again
 *  counting a tar also writes its member index (shard.TarIndex, TarIndexFiles) beside the cache,
 *    in _spindle_index/ (or FILE.index/), read by the tasks that open the shard
 * </pre>
 *
 * <p><b>What enters:</b> an input URI (a Hadoop FileSystem URI, a brace pattern of them, or a
 * preprocess output), the listing rules from {@code spark.spindle.*} keys (folder shard size,
 * Parquet columns), and a {@link dev.spindle.spark.manifest.ShardCatalog.Counter}. <b>What
 * leaves:</b> a {@link dev.spindle.spark.manifest.Manifest} (immutable, serializable; a sample's
 * dataset index is {@code offsets()[shard] + position}), its {@link
 * dev.spindle.spark.manifest.ManifestFingerprint} (which loader states record), and the cache files
 * beside the input. <b>Threads:</b> the driver's main thread lists, counts (or submits the counting
 * job) and reads or writes the cache; a Manifest is then only read, by any thread, on the driver
 * and in executors. Listing and reading shards are {@link dev.spindle.spark.shard}'s; this package
 * decides which shards make a dataset and how many samples each holds.
 *
 * <h2>Formats (normative)</h2>
 *
 * <h3>Manifest fingerprint</h3>
 *
 * SHA-256 over, big-endian: string {@code "spindle-manifest-fingerprint/1"}; int32 shard count; per
 * shard: its URI with the manifest's {@code Manifest.base()} prefix (the input; for a brace
 * pattern, its folder before the first brace) and one following '/' removed, its format name
 * ({@code TAR}, {@code IMAGE_FOLDER}, {@code PARQUET}), int64 bytes, int64 samples, int32 entry
 * count, per entry its path and int32 label; int32 class-name count and each name. A string is its
 * int32 UTF-8 length followed by the bytes.
 *
 * <h3>Manifest JSON ({@code spindle-manifest/4})</h3>
 *
 * <pre>
 * { "format": "spindle-manifest/4", "input": "file:/data/imagenet",
 *   "fingerprint": "…64 hex…", "classNames": [], "parquetColumns": null,
 *   "shards": [ { "path": "train-000.tar", "format": "TAR", "bytes": 1048576,
 *                 "modificationTime": 1763880000000, "samples": 1000, "entries": [] } ] }
 * </pre>
 *
 * {@code fingerprint} is the manifest fingerprint (above) of what the document holds, checked on
 * every read: a document whose shards do not hash to it was edited after it was written (a lowered
 * sample count would otherwise leave the shard's last samples out of every plan, unseen) and is
 * refused ({@code ManifestCodec.EditedException}); a document without it (written before it was
 * recorded) is read unchecked. A shard's {@code path} is relative to {@code Manifest.base()}
 * ({@code ""} for the input itself: a single-file input, or an image folder's root), so the
 * document describes its data wherever the data set is copied; a manifest whose shards are not
 * below its input cannot be written. Folder shards list {@code "entries": [{"path":
 * "n01440764/a.JPEG", "label": 0}, …]}. Parquet manifests name their columns once, {@code
 * "parquetColumns": {"image": "image", "label": "label"}} (null otherwise). A tar shard's {@code
 * samples} is what its reader yields, counted by the same parser: good and quarantined samples, and
 * a damaged shard's final {@code (rest of shard)} sample; a Parquet shard's is its footer's row
 * count. Earlier formats are counted again when met as a cache: format 1 (identical fields to 2)
 * was counted by a parser of its own that could disagree with the reader on damaged shards or names
 * that are not UTF-8; format 2 recorded absolute shard {@code uri}s, and its cache was trusted
 * under another input.
 *
 * <h3>Manifest binary ({@code spindle-manifest-bin/2})</h3>
 *
 * The same content as the JSON in a compact form, written beside it ({@code
 * _spindle_manifest.bin}); the JSON stays the authoritative, readable form. Big-endian:
 *
 * <pre>
 * file    = the 23 ASCII bytes "spindle-manifest-bin/2\n"
 *           int64 jsonBytes, int64 jsonModificationTime  (the JSON file it was derived from, as its
 *                                                        file system reported it; -1, -1 for none)
 *           32 bytes SHA-256, int32 shards, int64 samples (the manifest fingerprint, above)
 *           int32 columns' length L, int32 compressed length C
 *           C bytes: the columns, zlib-compressed (RFC 1950), inflating to exactly L bytes
 *           int32 CRC-32C of every byte before it
 * columns = string input, varint c, c × string class name,
 *           byte 0 (no Parquet columns) | byte 1, string image column, string label column,
 *           varint S (shards), then S values of each column in turn:
 *           path (front-coded), byte format (1 TAR, 2 IMAGE_FOLDER, 3 PARQUET), zigzag bytes,
 *           zigzag (modificationTime − the previous shard's; the first shard's minus 0),
 *           varint samples, varint entry count;
 *           then every folder entry, shard by shard: path (front-coded), zigzag label
 * front-coded path = varint k, varint n, n bytes: the path's encoded bytes are the first k of
 *           the previous path's (the previous shard's, or entry's; none for the first) followed
 *           by these n
 * string  = varint n, n bytes: the string encoded
 * encoded = UTF-8, except that a lone surrogate is its own 3 bytes (WTF-8)
 * varint  = unsigned LEB128 (7 bits a byte, low first, at most 10 bytes);
 *           zigzag v = varint of (v &lt;&lt; 1) ^ (v &gt;&gt; 63)
 * </pre>
 *
 * Paths are relative as in the JSON. A reader checks the CRC, the lengths, that nothing follows the
 * last column, and that the manifest it decoded has the recorded fingerprint; anything else is
 * refused ({@code IllegalArgumentException}, "Invalid binary manifest: …"). The form stands for its
 * JSON only while the JSON has the recorded size and modification time.
 *
 * <h3>Tar member index ({@code spindle-tar-index/1})</h3>
 *
 * One file per uncompressed tar shard, written by the counting task from the same walk of the
 * shard's headers that counts its samples, and only when that walk found no damage and no repeated
 * key. Where: beside the cache, {@code DIR/_spindle_index/P.idx} for {@code
 * DIR/_spindle_manifest.json} and {@code FILE.index/P.idx} for {@code --manifest FILE}, where
 * {@code P} is the shard's path relative to {@code Manifest.base()} (its file name for a shard that
 * is the input itself). Written whole or not at all (a temporary file renamed into place; a single
 * PUT on an object store). Big-endian:
 *
 * <pre>
 * file   = the 20 ASCII bytes "spindle-tar-index/1\n"
 *          int64 shardBytes, int64 shardModificationTime  (the shard as its file system reported it
 *                                                          when counted)
 *          int64 changeTime  (a local file's inode change time in ns, which every write moves and
 *                             which cannot be set back; -1 on other file systems)
 *          varint N (samples)
 *          N × (varint start − the previous sample's end (the first sample's: its start),
 *               varint end − start)
 *          int32 CRC-32C of every byte before it
 * varint = unsigned LEB128, as above
 * </pre>
 *
 * Sample {@code i} is the bytes {@code [start, end)} of the shard: from the first header block of
 * its first member (the pax {@code x} and GNU {@code L}/{@code K} headers that belong to it
 * included) to the end of its last member's content padded to 512 bytes. Members of no sample
 * (hidden names, {@code __MACOSX/}, directories, links) lie between ranges or inside one; read
 * alone, a range yields that sample exactly as a walk of the whole shard does. A reader refuses
 * (and reads the shard whole, in order, logging once why) a file that fails its CRC or lengths, has
 * anything after the last sample or a range past {@code shardBytes}, whose shard bytes,
 * modification time or {@code N} differ from the manifest's record of the shard, or whose {@code
 * changeTime} is not the local file's now (a shard edited in place with its modification time set
 * back, which the manifest's check cannot see).
 */
package dev.spindle.spark.manifest;
