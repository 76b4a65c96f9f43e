package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * One image of a class-per-folder tree.
 *
 * @param path the file's path relative to the tree's root, {@code <class>/<file>}
 * @param label the index of its class in the manifest's sorted class names
 */
public record FolderEntry(String path, int label) implements Serializable {}
