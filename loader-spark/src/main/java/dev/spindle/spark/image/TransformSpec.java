package dev.spindle.spark.image;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Parses a transform chain such as {@code "resize(256),center_crop(224),normalize"} into {@link
 * ImageOp}s, in the order written (like torchvision's {@code Compose}). Operations:
 *
 * <pre>
 *  resize(S[, filter=bilinear|bicubic|box])      short side to S      resize(H, W[, filter=])
 *  center_crop(S) | center_crop(H, W)            crop(TOP, LEFT, H, W)
 *  random_resized_crop(S | H, W[, scale=0.08:1][, ratio=0.75:1.3333333333333333][, filter=])
 *  hflip | hflip(P)                              flips with probability P (default 0.5)
 *  normalize | normalize(mean=R:G:B, std=R:G:B)  ImageNet mean/std by default; must be last
 * </pre>
 *
 * Stateless; errors name the bad operation.
 */
final class TransformSpec {
  private TransformSpec() {}

  static List<ImageOp> parse(String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException("Invalid image transforms: empty");
    }
    List<ImageOp> ops = new ArrayList<>();
    for (String op : splitTopLevel(spec)) {
      try {
        ops.add(parseOp(op.trim()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "Invalid image transform '" + op.trim() + "': " + e.getMessage(), e);
      }
    }
    for (int i = 0; i < ops.size() - 1; i++) {
      if (ops.get(i) instanceof ImageOp.Normalize) {
        throw new IllegalArgumentException(
            "Invalid image transforms '" + spec + "': normalize must be the last operation");
      }
    }
    return List.copyOf(ops);
  }

  private static ImageOp parseOp(String text) {
    int open = text.indexOf('(');
    String name = (open < 0 ? text : text.substring(0, open)).trim().toLowerCase(Locale.ROOT);
    List<String> positional = new ArrayList<>();
    Map<String, String> named = new LinkedHashMap<>();
    if (open >= 0) {
      if (!text.endsWith(")")) {
        throw new IllegalArgumentException("missing ')'");
      }
      String inner = text.substring(open + 1, text.length() - 1);
      for (String arg : inner.isBlank() ? List.<String>of() : List.of(inner.split(","))) {
        int eq = arg.indexOf('=');
        if (eq < 0) {
          positional.add(arg.trim());
        } else {
          named.put(
              arg.substring(0, eq).trim().toLowerCase(Locale.ROOT), arg.substring(eq + 1).trim());
        }
      }
    }
    return Args.build(name, positional, named);
  }

  private static List<String> splitTopLevel(String spec) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int from = 0;
    for (int i = 0; i < spec.length(); i++) {
      char c = spec.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(spec.substring(from, i));
        from = i + 1;
      }
      if (depth < 0) {
        throw new IllegalArgumentException(
            "Invalid image transforms '" + spec + "': unbalanced ')'");
      }
    }
    if (depth != 0) {
      throw new IllegalArgumentException("Invalid image transforms '" + spec + "': unbalanced '('");
    }
    parts.add(spec.substring(from));
    return parts;
  }

  /** {@code {height, width}} of the chain's output, or an error when it depends on the input. */
  static int[] outputSize(String spec, List<ImageOp> ops) {
    int h = -1;
    int w = -1;
    for (ImageOp op : ops) {
      if (op instanceof ImageOp.Resize r) {
        h = r.shortSide() ? -1 : r.height();
        w = r.shortSide() ? -1 : r.width();
      } else if (op instanceof ImageOp.CenterCrop c) {
        h = c.height();
        w = c.width();
      } else if (op instanceof ImageOp.Crop c) {
        h = c.height();
        w = c.width();
      } else if (op instanceof ImageOp.RandomResizedCrop r) {
        h = r.height();
        w = r.width();
      }
    }
    if (h < 0 || w < 0) {
      throw new IllegalArgumentException(
          "Invalid image transforms '"
              + spec
              + "': the output size depends on the input (end with a crop or a resize(H, W))");
    }
    return new int[] {h, w};
  }
}
