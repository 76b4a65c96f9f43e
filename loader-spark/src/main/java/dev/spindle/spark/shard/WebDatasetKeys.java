package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * WebDataset naming: {@code dir/KEY.ext}; the key runs up to the first dot of the file name (after
 * the last {@code /}), the extension is the rest: {@code a.b.jpg} is key {@code a} with extension
 * {@code b.jpg}, so it is no {@code .jpg} image. Names are raw bytes: '.' and '/' are ASCII, which
 * UTF-8 never uses inside a multi-byte character, so the split is the same for any encoding.
 */
final class WebDatasetKeys {
  /**
   * A tar sample's image entries, in the order messages list them: an image folder's, WebDataset's
   * other Netpbm names ({@code pbm}, {@code pnm}) and {@code gif} (its first frame is decoded).
   */
  static final List<String> TAR_IMAGES = FieldSpec.IMAGE_EXTENSIONS;

  static final Set<String> TAR_IMAGE_EXTENSIONS = Set.copyOf(TAR_IMAGES);
  static final Set<String> LABEL_EXTENSIONS = Set.of("cls", "label");

  /** WebDataset's {@code skip_meta} default, matched from the start of the name. */
  private static final Pattern SKIP_META = Pattern.compile("__[^/]*__($|/)");

  private static final Pattern MACOSX = Pattern.compile("(^|/)__MACOSX/");

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

  /**
   * False for a member that belongs to no sample and is passed over like a directory, as WebDataset
   * passes it over (webdataset/tariterators.py, {@code tar_file_iterator} and {@code
   * group_by_keys}):
   *
   * <ul>
   *   <li>a file name that starts with '.': it has no key (the regular expression of {@code
   *       base_plus_ext} wants a character other than '.' before the first dot, and a name it does
   *       not match is skipped). This covers macOS's AppleDouble members ({@code ._k1.jpg}, which
   *       {@code tar} on a Mac writes before each file that has extended attributes, so they split
   *       every sample) and {@code .DS_Store}. WebDataset's regular expression lets a folder name
   *       stand in for the key ({@code dir/._k1.jpg} becomes a sample keyed {@code dir/}); here
   *       such a member is skipped at any depth;
   *   <li>a name that matches WebDataset's {@code skip_meta}, {@code __[^/]*__($|/)} from its start
   *       ({@code __meta__}, {@code __index__/x}), the metadata WebDataset skips;
   *   <li>anything under a {@code __MACOSX/} folder, where macOS's Archive Utility keeps the
   *       AppleDouble files of what it packed (only {@code ._*} names, skipped by the first rule
   *       when WebDataset reads them).
   * </ul>
   */
  static boolean isSampleMember(byte[] entryName) {
    int start = fileNameStart(entryName);
    if (start < entryName.length && entryName[start] == '.') {
      return false;
    }
    if (!hasDoubleUnderscore(entryName)) {
      // both patterns need "__"; '_' is ASCII, and the text escapes other bytes as \xHH, which
      // holds no '_', so a name without "__" in its bytes has none in its text either
      return true;
    }
    String name = EscapedUtf8.text(entryName);
    return !SKIP_META.matcher(name).lookingAt() && !MACOSX.matcher(name).find();
  }

  private static boolean hasDoubleUnderscore(byte[] name) {
    for (int i = 1; i < name.length; i++) {
      if (name[i] == '_' && name[i - 1] == '_') {
        return true;
      }
    }
    return false;
  }

  private static int fileNameStart(byte[] name) {
    int start = 0;
    for (int i = 0; i < name.length; i++) {
      if (name[i] == '/') {
        start = i + 1;
      }
    }
    return start;
  }

  private static int firstDot(byte[] name) {
    int start = fileNameStart(name);
    for (int i = start; i < name.length; i++) {
      if (name[i] == '.') {
        return i;
      }
    }
    return name.length;
  }
}
