package dev.spindle.spark.manifest;

/**
 * One file as a fresh listing sees it (from Hadoop's {@code FileStatus}): the input to {@link
 * ManifestCheck}.
 *
 * @param uri the file's URI, spelled as the manifest spells it: a tar shard's {@code uri}, or a
 *     folder shard's {@code uri + "/" + entry.path()}
 * @param bytes its length
 * @param modificationTime ms since the epoch
 */
public record FileFacts(String uri, long bytes, long modificationTime) {}
