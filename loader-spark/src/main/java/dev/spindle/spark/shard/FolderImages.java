package dev.spindle.spark.shard;

import java.util.List;
import java.util.Locale;

/**
 * Which files of an image folder tree are samples: torchvision's {@code ImageFolder} rule, so a
 * tree gives the same samples here as there. A file is a sample when its lower-cased name ends with
 * one of torchvision's {@code IMG_EXTENSIONS} (torchvision/datasets/folder.py, {@code
 * has_file_allowed_extension}); whether Spindle can decode it is the decoder's business (one it
 * cannot is quarantined with the decoder's reason, never dropped). Stateless.
 */
public final class FolderImages {
  /** torchvision 0.14's {@code IMG_EXTENSIONS}, in its order. */
  public static final List<String> EXTENSIONS =
      List.of(".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp");

  /** Why a file of another extension in a class folder is no sample. */
  public static final String NOT_AN_IMAGE =
      "not an image file of ImageFolder's extensions (" + String.join(", ", EXTENSIONS) + ")";

  private FolderImages() {}

  /** True when {@code fileName} ends with one of {@link #EXTENSIONS}, case aside. */
  static boolean isImage(String fileName) {
    String lower = fileName.toLowerCase(Locale.ROOT);
    for (String ext : EXTENSIONS) {
      if (lower.endsWith(ext)) {
        return true;
      }
    }
    return false;
  }

  /**
   * True for macOS's AppleDouble files ({@code ._photo.jpg}: the extended attributes of {@code
   * photo.jpg}, written beside it on file systems without them and into archives made on a Mac):
   * never an image, whatever their extension.
   */
  static boolean isAppleDouble(String fileName) {
    return fileName.startsWith("._");
  }
}
