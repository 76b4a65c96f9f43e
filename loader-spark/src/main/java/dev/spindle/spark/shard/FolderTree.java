package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * An image folder tree read as torchvision's {@code ImageFolder} reads it
 * (torchvision/datasets/folder.py, {@code find_classes} and {@code make_dataset}), so that its
 * classes, labels and samples are the ones a PyTorch user gets from the same folder:
 *
 * <ul>
 *   <li>the classes are every folder directly under the root (links to folders too, hidden ones
 *       too), sorted as Python sorts strings (by code point); a class's label is its index;
 *   <li>a class's samples are the files anywhere below its folder whose name ends with one of
 *       torchvision's extensions ({@link FolderImages}), ordered as {@code sorted(os.walk(...))}
 *       yields them: by folder path, then by file name;
 *   <li>a class folder without any sample is an error, as torchvision's {@code FileNotFoundError:
 *       Found no valid file for the classes …}: a class that silently vanished would shift the
 *       label of every class after it.
 * </ul>
 *
 * <p>Two differences, both things torchvision would fail on when it decodes them: macOS's metadata
 * is no data, so a {@code __MACOSX} folder is no class (listed once, with its file count) and an
 * AppleDouble file {@code ._x.jpg} is no sample (listed); and a file reached twice through links is
 * taken once ({@link InputListing}). Every other file that is not a sample (another extension, a
 * file directly in the root) is listed as skipped with its reason; hidden files in the root ({@code
 * _spindle_manifest.json}) pass silently. Driver; immutable.
 */
public final class FolderTree {
  static final String MACOSX = "__MACOSX";
  private static final String IN_ROOT =
      "a file directly in the root folder, outside any class folder (ImageFolder reads only files"
          + " inside class folders ROOT/<class>/…)";
  private static final String APPLE_DOUBLE =
      "macOS AppleDouble metadata (._*: a file's extended attributes), not an image";
  private static final int LISTED_PER_CLASS = 3;

  /** Python's order of {@code str}: by code point (Java's compareTo compares UTF-16 units). */
  static final Comparator<String> PYTHON_ORDER =
      (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
          int ca = a.codePointAt(i);
          int cb = b.codePointAt(j);
          if (ca != cb) {
            return Integer.compare(ca, cb);
          }
          i += Character.charCount(ca);
          j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
      };

  private final List<String> classNames;
  private final List<FileStatus> images;
  private final List<Integer> labels;
  private final List<String> paths;
  private final List<InputListing.Skipped> skipped;

  private FolderTree(
      List<String> classNames,
      List<FileStatus> images,
      List<Integer> labels,
      List<String> paths,
      List<InputListing.Skipped> skipped) {
    this.classNames = List.copyOf(classNames);
    this.images = List.copyOf(images);
    this.labels = List.copyOf(labels);
    this.paths = List.copyOf(paths);
    this.skipped = List.copyOf(skipped);
  }

  /** One file below a class folder. */
  private record Found(FileStatus status, String folder, String name, String relative) {}

  /**
   * Reads the tree.
   *
   * @throws IOException when a class folder holds no sample (naming each, with what it holds) or
   *     there is no class folder at all
   */
  static FolderTree of(String input, Path root, InputListing.Listing listing) throws IOException {
    List<String> classes = new ArrayList<>();
    for (String name : listing.folders()) {
      if (!name.equals(MACOSX)) {
        classes.add(name);
      }
    }
    classes.sort(PYTHON_ORDER);
    Map<String, List<Found>> byClass = new LinkedHashMap<>();
    classes.forEach(c -> byClass.put(c, new ArrayList<>()));
    List<InputListing.Skipped> skipped = new ArrayList<>();
    Map<String, Integer> macosx = new TreeMap<>(); // a __MACOSX folder's path -> its files
    for (FileStatus f : listing.files()) {
      String rel = InputListing.relative(root, f.getPath());
      int slash = rel.indexOf('/');
      String macFolder = macosxFolder(rel);
      if (macFolder != null) {
        macosx.merge(macFolder, 1, Integer::sum);
      } else if (slash < 0 || !byClass.containsKey(rel.substring(0, slash))) {
        if (!InputListing.isHiddenName(rel)) {
          skipped.add(new InputListing.Skipped(f.getPath().toString(), IN_ROOT));
        }
      } else {
        int last = rel.lastIndexOf('/');
        byClass
            .get(rel.substring(0, slash))
            .add(new Found(f, rel.substring(0, last), rel.substring(last + 1), rel));
      }
    }
    macosx.forEach((folder, count) -> skipped.add(macosxSkipped(root, folder, count)));
    return build(input, classes, byClass, skipped);
  }

  /** A {@code __MACOSX} folder, listed once. */
  private static InputListing.Skipped macosxSkipped(Path root, String folder, int files) {
    return new InputListing.Skipped(
        new Path(root, folder).toString(),
        "macOS archive metadata (__MACOSX), no class and no image: "
            + files
            + (files == 1 ? " file" : " files")
            + " not read");
  }

  /** The samples of each class in torchvision's order; refuses a tree with an empty class. */
  private static FolderTree build(
      String input,
      List<String> classes,
      Map<String, List<Found>> byClass,
      List<InputListing.Skipped> skipped)
      throws IOException {
    if (classes.isEmpty()) {
      throw new IOException(
          "Couldn't find any class folder in "
              + input
              + ": an image folder tree is ROOT/<class>/<image>, as torchvision's ImageFolder reads"
              + " it (its images directly in the root are no samples)");
    }
    List<FileStatus> images = new ArrayList<>();
    List<Integer> labels = new ArrayList<>();
    List<String> paths = new ArrayList<>();
    Map<String, List<Found>> empty = new LinkedHashMap<>();
    for (int label = 0; label < classes.size(); label++) {
      List<Found> files = byClass.get(classes.get(label));
      files.sort(
          Comparator.comparing(Found::folder, PYTHON_ORDER)
              .thenComparing(Found::name, PYTHON_ORDER));
      int before = images.size();
      for (Found f : files) {
        if (FolderImages.isAppleDouble(f.name())) {
          skipped.add(new InputListing.Skipped(f.status().getPath().toString(), APPLE_DOUBLE));
        } else if (FolderImages.isImage(f.name())) {
          images.add(f.status());
          labels.add(label);
          paths.add(f.relative());
        } else {
          skipped.add(
              new InputListing.Skipped(f.status().getPath().toString(), FolderImages.NOT_AN_IMAGE));
        }
      }
      if (images.size() == before) {
        empty.put(classes.get(label), files);
      }
    }
    if (!empty.isEmpty()) {
      throw new IOException(emptyClasses(input, empty));
    }
    return new FolderTree(classes, images, labels, paths, skipped);
  }

  /** torchvision's message, with what each empty class folder holds. */
  private static String emptyClasses(String input, Map<String, List<Found>> empty) {
    StringBuilder s =
        new StringBuilder("Found no valid file for the classes ")
            .append(String.join(", ", empty.keySet()))
            .append(" of the image folder ")
            .append(input)
            .append(". Supported extensions are: ")
            .append(String.join(", ", FolderImages.EXTENSIONS))
            .append(
                ". Every folder directly under the root is a class, as in torchvision's"
                    + " ImageFolder (which refuses this tree too): give each class at least one"
                    + " image, or move the folder out of the root.");
    empty.forEach(
        (c, files) -> {
          s.append("\n  ").append(c).append(": ");
          if (files.isEmpty()) {
            s.append("no file");
            return;
          }
          s.append(files.size())
              .append(files.size() == 1 ? " file, " : " files, ")
              .append("none an image: ");
          s.append(
              String.join(
                  ", ", files.stream().limit(LISTED_PER_CLASS).map(Found::relative).toList()));
          s.append(files.size() > LISTED_PER_CLASS ? ", …" : "");
        });
    return s.toString();
  }

  /** The {@code __MACOSX} folder {@code relative} lies in ({@code a/__MACOSX}), or null. */
  private static String macosxFolder(String relative) {
    String[] parts = relative.split("/");
    for (int i = 0; i < parts.length - 1; i++) {
      if (parts[i].equals(MACOSX)) {
        return String.join("/", java.util.Arrays.copyOf(parts, i + 1));
      }
    }
    return null;
  }

  /** The classes, by label. */
  public List<String> classNames() {
    return classNames;
  }

  /** The samples, in torchvision's order. */
  public List<FileStatus> images() {
    return images;
  }

  /** Each sample's label. */
  public List<Integer> labels() {
    return labels;
  }

  /** Each sample's path below the root ({@code <class>/…/<file>}). */
  public List<String> paths() {
    return paths;
  }

  /** Files that are no samples, and why. */
  List<InputListing.Skipped> skipped() {
    return skipped;
  }
}
