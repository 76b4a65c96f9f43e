package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * The layout of an input folder and what each of its files is. A tree is one layout: tar shards
 * (WebDataset), Parquet files, or an image folder tree ({@link FolderTree}, torchvision's {@code
 * ImageFolder}). The kind of each file that is not hidden (no part of its path starts with {@code
 * _} or {@code .}) decides: tar shards ({@link TarCompression}), {@code .parquet} files, and images
 * (torchvision's extensions, {@link FolderImages}); a tree holding more than one of these kinds is
 * refused, naming how many of each and the first of them, since which of them the user meant cannot
 * be known (a stray {@code backup.tar} in an image folder must not become the data set). A tar
 * compressed in a way that is not read ({@code .tar.lz4}) is refused by name. Every other file is
 * listed as skipped with its reason; hidden files are side files (Hadoop's {@code _SUCCESS}, {@code
 * .crc}, Spindle's own {@code _spindle_manifest.json}) and pass silently, except inside an image
 * folder's class folders, where torchvision takes them as it takes any file.
 *
 * <p>Used by the catalog to build a manifest and by the manifest cache to check one, so both see
 * the same files. Driver; immutable.
 */
public final class InputTree {
  private static final int NAMED = 3;

  private final ShardFormat format;
  private final List<FileStatus> files;
  private final FolderTree folder;
  private final List<InputListing.Skipped> skipped;

  private InputTree(
      ShardFormat format,
      List<FileStatus> files,
      FolderTree folder,
      List<InputListing.Skipped> skipped) {
    this.format = format;
    this.files = List.copyOf(files);
    this.folder = folder;
    this.skipped = List.copyOf(skipped);
  }

  /** A file's kind, by its name. */
  private enum Kind {
    TAR,
    UNREAD_TAR,
    PARQUET,
    IMAGE,
    OTHER
  }

  /**
   * Classifies the files of {@code listing}, the listing of the folder {@code root}.
   *
   * @return the tree, or null when it holds no shard and no image
   * @throws IOException naming the files when the tree mixes layouts, holds tars that cannot be
   *     read, or is an image folder that torchvision's {@code ImageFolder} would refuse
   */
  public static InputTree of(String input, Path root, InputListing.Listing listing)
      throws IOException {
    Map<Kind, List<FileStatus>> byKind = new EnumMap<>(Kind.class);
    for (FileStatus f : listing.files()) {
      if (!InputListing.hidden(InputListing.relative(root, f.getPath()))) {
        byKind.computeIfAbsent(kind(f.getPath().getName()), k -> new ArrayList<>()).add(f);
      }
    }
    requireOneLayout(input, root, byKind);
    List<InputListing.Skipped> linkSkips = new ArrayList<>();
    for (InputListing.Skipped s : listing.skipped()) {
      if (!InputListing.hidden(InputListing.relative(root, new Path(s.path())))) {
        linkSkips.add(s);
      }
    }
    if (byKind.containsKey(Kind.IMAGE)) {
      FolderTree tree = FolderTree.of(input, root, listing);
      List<InputListing.Skipped> all = new ArrayList<>(listing.skipped());
      all.addAll(tree.skipped());
      return new InputTree(ShardFormat.IMAGE_FOLDER, tree.images(), tree, all);
    }
    Kind data = byKind.containsKey(Kind.TAR) ? Kind.TAR : Kind.PARQUET;
    if (!byKind.containsKey(data)) {
      return null;
    }
    List<FileStatus> shards = new ArrayList<>(byKind.get(data));
    shards.sort(Comparator.comparing(f -> f.getPath().toString()));
    String why =
        data == Kind.TAR
            ? "not a tar shard (" + TarCompression.suffixList() + ")"
            : "not a Parquet shard (.parquet)";
    for (FileStatus f : byKind.getOrDefault(Kind.OTHER, List.of())) {
      linkSkips.add(new InputListing.Skipped(f.getPath().toString(), why));
    }
    ShardFormat format = data == Kind.TAR ? ShardFormat.TAR : ShardFormat.PARQUET;
    return new InputTree(format, shards, null, linkSkips);
  }

  /** {@link ShardFormat#TAR}, {@link ShardFormat#PARQUET} or {@link ShardFormat#IMAGE_FOLDER}. */
  public ShardFormat format() {
    return format;
  }

  /** The shard files (sorted by path), or an image folder's samples in torchvision's order. */
  public List<FileStatus> files() {
    return files;
  }

  /** What was not taken, and why: links, files of no shard's kind, an image folder's others. */
  public List<InputListing.Skipped> skipped() {
    return skipped;
  }

  /** An image folder's classes and samples; null for tar and Parquet trees. */
  public FolderTree folder() {
    return folder;
  }

  private static Kind kind(String name) {
    if (TarCompression.of(name) != null) {
      return Kind.TAR;
    }
    if (TarCompression.isUnreadableTar(name)) {
      return Kind.UNREAD_TAR;
    }
    ShardFormat format = ShardFiles.formatOf(name);
    return format == ShardFormat.PARQUET
        ? Kind.PARQUET
        : format == ShardFormat.IMAGE_FOLDER ? Kind.IMAGE : Kind.OTHER;
  }

  private static void requireOneLayout(String input, Path root, Map<Kind, List<FileStatus>> byKind)
      throws IOException {
    List<FileStatus> unread = byKind.get(Kind.UNREAD_TAR);
    if (unread != null) {
      throw new IOException(
          "Input "
              + input
              + " holds "
              + counted(root, unread, "tar shard", "tar shards")
              + " compressed in a way Spindle does not read; tar shards are read as "
              + TarCompression.suffixList()
              + ": recompress them as one of those");
    }
    List<String> kinds = new ArrayList<>();
    if (byKind.containsKey(Kind.TAR)) {
      kinds.add(counted(root, byKind.get(Kind.TAR), "tar shard", "tar shards"));
    }
    if (byKind.containsKey(Kind.PARQUET)) {
      kinds.add(counted(root, byKind.get(Kind.PARQUET), "Parquet file", "Parquet files"));
    }
    if (byKind.containsKey(Kind.IMAGE)) {
      kinds.add(counted(root, byKind.get(Kind.IMAGE), "image", "images"));
    }
    if (kinds.size() > 1) {
      throw new IOException(
          "Input "
              + input
              + " mixes layouts: it holds "
              + String.join(" and ", kinds)
              + "; a data set is one layout (tar shards, Parquet files, or an image folder tree"
              + " ROOT/<class>/<image>), and which one was meant cannot be known: move the files"
              + " that do not belong out of it, or point the input at a folder of one kind");
    }
  }

  /** "2 tar shards (a.tar, b/c.tar)", the first {@value #NAMED} named by their relative path. */
  private static String counted(Path root, List<FileStatus> files, String one, String many) {
    List<String> names =
        files.stream()
            .map(f -> InputListing.relative(root, f.getPath()))
            .sorted()
            .limit(NAMED)
            .toList();
    return files.size()
        + " "
        + (files.size() == 1 ? one : many)
        + " ("
        + String.join(", ", names)
        + (files.size() > NAMED ? ", …" : "")
        + ")";
  }
}
