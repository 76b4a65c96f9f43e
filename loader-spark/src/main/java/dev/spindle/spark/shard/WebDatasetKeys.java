package dev.spindle.spark.shard;

import java.util.Locale;
import java.util.Set;

/** WebDataset naming: {@code dir/KEY.ext}; the key runs up to the first dot of the file name. */
final class WebDatasetKeys {
  static final Set<String> IMAGE_EXTENSIONS = Set.of("jpg", "jpeg", "png");
  static final Set<String> LABEL_EXTENSIONS = Set.of("cls", "label");

  private WebDatasetKeys() {}

  static String key(String entryName) {
    int slash = entryName.lastIndexOf('/');
    int dot = entryName.indexOf('.', slash + 1);
    return dot < 0 ? entryName : entryName.substring(0, dot);
  }

  /** The extension after the key, lower case ("jpg", "seg.png"), or "" when there is none. */
  static String extension(String entryName) {
    int slash = entryName.lastIndexOf('/');
    int dot = entryName.indexOf('.', slash + 1);
    return dot < 0 ? "" : entryName.substring(dot + 1).toLowerCase(Locale.ROOT);
  }

  static boolean isImageFile(String fileName) {
    int dot = fileName.lastIndexOf('.');
    return dot >= 0 && IMAGE_EXTENSIONS.contains(fileName.substring(dot + 1).toLowerCase(Locale.ROOT));
  }
}
