package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * One image of a class-per-folder tree.
 *
 * @param path the file's path relative to the tree's root, {@code <class>/<file>} or, for a file in
 *     a folder below its class folder, {@code <class>/<folder>/…/<file>}
 * @param label the index of its class in the manifest's class names (torchvision's order)
 */
public record FolderEntry(String path, int label) implements Serializable {}
