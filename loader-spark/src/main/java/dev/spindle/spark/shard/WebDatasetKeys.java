package dev.spindle.spark.shard;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * WebDataset naming: {@code dir/KEY.ext}; the key runs up to the first dot of the file name (after
 * the last {@code /}), the extension is the rest: {@code a.b.jpg} is key {@code a} with extension
 * {@code b.jpg}, so it is no {@code .jpg} image. Names are raw bytes: '.' and '/' are ASCII, which
 * UTF-8 never uses inside a multi-byte character, so the split is the same for any encoding.
 */
final class WebDatasetKeys {
  /** An image folder's images: torchvision's {@code ImageFolder} extensions (IMG_EXTENSIONS). */
  static final Set<String> IMAGE_EXTENSIONS =
      Set.of("jpg", "jpeg", "png", "ppm", "bmp", "pgm", "tif", "tiff", "webp");

  /**
   * A tar sample's image entries, in the order messages list them: an image folder's, WebDataset's
   * other Netpbm names ({@code pbm}, {@code pnm}) and {@code gif} (its first frame is decoded).
   */
  static final List<String> TAR_IMAGES =
      List.of(
          "jpg", "jpeg", "png", "webp", "bmp", "ppm", "pgm", "pbm", "pnm", "tif", "tiff", "gif");

  static final Set<String> TAR_IMAGE_EXTENSIONS = Set.copyOf(TAR_IMAGES);
  static final Set<String> LABEL_EXTENSIONS = Set.of("cls", "label");

  private WebDatasetKeys() {}

  /** The key's bytes: the name up to the first dot of its file name, or all of it. */
  static byte[] key(byte[] entryName) {
    return Arrays.copyOf(entryName, firstDot(entryName));
  }

  /** The extension after the key, lower case ("jpg", "seg.png"), or "" when there is none. */
  static String extension(byte[] entryName) {
    int dot = firstDot(entryName);
    return dot == entryName.length
        ? ""
        : EscapedUtf8.text(entryName, dot + 1, entryName.length).toLowerCase(Locale.ROOT);
  }

  static boolean isImageFile(String fileName) {
    int dot = fileName.lastIndexOf('.');
    return dot >= 0
        && IMAGE_EXTENSIONS.contains(fileName.substring(dot + 1).toLowerCase(Locale.ROOT));
  }

  private static int firstDot(byte[] name) {
    int start = 0;
    for (int i = 0; i < name.length; i++) {
      if (name[i] == '/') {
        start = i + 1;
      }
    }
    for (int i = start; i < name.length; i++) {
      if (name[i] == '.') {
        return i;
      }
    }
    return name.length;
  }
}
