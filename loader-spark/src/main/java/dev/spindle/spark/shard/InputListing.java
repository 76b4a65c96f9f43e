package dev.spindle.spark.shard;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * The files under an input folder, each once, and the names of its immediate subfolders. Every file
 * is listed, hidden ones too (names starting with {@code _} or {@code .}): which of them are data
 * is the layout's decision ({@link InputTree}), and an image folder tree takes hidden files as
 * torchvision does.
 *
 * <p>On the local file system, symbolic links are followed, but no folder and no file is taken
 * twice: a link back to a folder already listed (a loop such as {@code loop -> .}) or to a file
 * already taken is skipped, and so is a broken link; each skip is reported with its reason. Hidden
 * names are walked after all others, so a hidden link to the data ({@code .cache -> .}) never takes
 * a file before its own path does. Other file systems (HDFS, object stores) have no links to follow
 * and are listed as they are. Runs on the driver; stateless.
 */
public final class InputListing {
  /** Something under the input that was not taken, and why. */
  public record Skipped(String path, String reason) {}

  /**
   * The files taken, in no particular order, what was skipped, and the names of the root's
   * immediate subfolders (links to folders included, as Python's {@code os.scandir} sees them).
   */
  public record Listing(List<FileStatus> files, List<Skipped> skipped, List<String> folders) {}

  private InputListing() {}

  /** Lists the files under the folder {@code root}. */
  public static Listing list(FileSystem fs, Path root) throws IOException {
    return "file".equals(fs.getUri().getScheme()) ? new LocalWalk(fs).walk(root) : remote(fs, root);
  }

  /** True for a path relative to the input root that has a part named {@code _…} or {@code .…}. */
  static boolean hidden(String relative) {
    for (String part : relative.split("/")) {
      if (isHiddenName(part)) {
        return true;
      }
    }
    return false;
  }

  /** Side files by Hadoop's convention: {@code _SUCCESS}, {@code .crc}, Spindle's cache. */
  static boolean isHiddenName(String name) {
    return name.startsWith("_") || name.startsWith(".");
  }

  /** {@code file}'s path below {@code root}, without a leading '/' ({@code a/b.jpg}). */
  static String relative(Path root, Path file) {
    String r = root.toUri().getPath();
    String f = file.toUri().getPath();
    String rel = f.startsWith(r) ? f.substring(r.length()) : f;
    return rel.startsWith("/") ? rel.substring(1) : rel;
  }

  private static Listing remote(FileSystem fs, Path root) throws IOException {
    List<FileStatus> files = new ArrayList<>();
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(root, true);
    while (it.hasNext()) {
      files.add(it.next());
    }
    List<String> folders = new ArrayList<>();
    for (FileStatus s : fs.listStatus(root)) {
      if (s.isDirectory()) {
        folders.add(s.getPath().getName());
      }
    }
    return new Listing(files, List.of(), folders);
  }

  /** A depth-first walk of a local tree that remembers the real path of everything it took. */
  private static final class LocalWalk {
    private final FileSystem fs;
    private final Map<java.nio.file.Path, String> folders = new HashMap<>();
    private final Map<java.nio.file.Path, String> files = new HashMap<>();
    private final List<FileStatus> taken = new ArrayList<>();
    private final List<Skipped> skipped = new ArrayList<>();
    private final List<String> rootFolders = new ArrayList<>();
    private final ArrayDeque<Map.Entry<java.nio.file.Path, String>> hidden = new ArrayDeque<>();

    LocalWalk(FileSystem fs) {
      this.fs = fs;
    }

    Listing walk(Path root) throws IOException {
      java.nio.file.Path dir = java.nio.file.Path.of(root.toUri().getPath());
      try (Stream<java.nio.file.Path> s = Files.list(dir)) {
        for (java.nio.file.Path child : s.sorted().toList()) {
          if (Files.isDirectory(child)) { // follows links, as os.scandir's is_dir()
            rootFolders.add(child.getFileName().toString());
          }
        }
      }
      folder(dir, dir.toString());
      while (!hidden.isEmpty()) {
        Map.Entry<java.nio.file.Path, String> next = hidden.poll();
        entry(next.getKey(), next.getValue());
      }
      return new Listing(taken, skipped, rootFolders);
    }

    private void folder(java.nio.file.Path dir, String shown) throws IOException {
      String first = folders.putIfAbsent(dir.toRealPath(), shown);
      if (first != null) {
        skipped.add(new Skipped(shown, "a link to a folder already listed (" + first + ")"));
        return;
      }
      List<java.nio.file.Path> children;
      try (Stream<java.nio.file.Path> s = Files.list(dir)) {
        children = s.sorted().toList();
      }
      for (java.nio.file.Path child : children) {
        String name = child.getFileName().toString();
        if (isHiddenName(name)) {
          hidden.add(Map.entry(child, shown + "/" + name));
        } else {
          entry(child, shown + "/" + name);
        }
      }
    }

    private void entry(java.nio.file.Path child, String shown) throws IOException {
      if (!Files.exists(child)) { // exists() follows links: only a broken link gets here
        skipped.add(new Skipped(shown, "a broken link (to " + Files.readSymbolicLink(child) + ")"));
      } else if (Files.isDirectory(child)) {
        folder(child, shown);
      } else if (Files.isRegularFile(child)) {
        String first = files.putIfAbsent(child.toRealPath(), shown);
        if (first != null) {
          skipped.add(new Skipped(shown, "the same file as " + first));
        } else {
          taken.add(fs.getFileStatus(new Path(child.toUri())));
        }
      } else {
        skipped.add(new Skipped(shown, "not a regular file"));
      }
    }
  }
}
