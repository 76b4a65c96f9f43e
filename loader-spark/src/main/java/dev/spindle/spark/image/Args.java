package dev.spindle.spark.image;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Builds one {@link ImageOp} from its parsed name and arguments; used by {@link TransformSpec}. */
final class Args {
  private final List<String> positional;
  private final Map<String, String> named;

  private Args(List<String> positional, Map<String, String> named) {
    this.positional = positional;
    this.named = named;
  }

  static ImageOp build(String name, List<String> positional, Map<String, String> named) {
    Args a = new Args(positional, named);
    return switch (name) {
      case "resize" -> {
        a.allow(1, 2, "filter");
        ResampleFilter f = a.filter();
        yield a.count() == 1
            ? new ImageOp.Resize(a.integer(0), a.integer(0), true, f)
            : new ImageOp.Resize(a.integer(0), a.integer(1), false, f);
      }
      case "center_crop" -> {
        a.allow(1, 2);
        yield new ImageOp.CenterCrop(a.integer(0), a.integer(a.count() - 1));
      }
      case "crop" -> {
        a.allow(4, 4);
        yield new ImageOp.Crop(a.integer(0), a.integer(1), a.integer(2), a.integer(3));
      }
      case "random_resized_crop" -> {
        a.allow(1, 2, "scale", "ratio", "filter");
        double[] scale = a.range("scale", 0.08, 1.0);
        double[] ratio = a.range("ratio", 3.0 / 4.0, 4.0 / 3.0);
        yield new ImageOp.RandomResizedCrop(
            a.integer(0),
            a.integer(a.count() - 1),
            scale[0],
            scale[1],
            ratio[0],
            ratio[1],
            a.filter());
      }
      case "hflip" -> {
        a.allow(0, 1);
        yield new ImageOp.HorizontalFlip(a.count() == 0 ? 0.5 : number(a.positional.get(0)));
      }
      case "normalize" -> {
        a.allow(0, 0, "mean", "std");
        yield new ImageOp.Normalize(
            a.triple("mean", ImageOp.Normalize.IMAGENET_MEAN),
            a.triple("std", ImageOp.Normalize.IMAGENET_STD));
      }
      default ->
          throw new IllegalArgumentException(
              "unknown operation '"
                  + name
                  + "' (known: resize, center_crop, crop, random_resized_crop, hflip, normalize)");
    };
  }

  private int count() {
    return positional.size();
  }

  private void allow(int min, int max, String... names) {
    if (count() < min || count() > max) {
      throw new IllegalArgumentException(
          "takes " + (min == max ? "" + min : min + " to " + max) + " values, got " + count());
    }
    Set<String> known = Set.of(names);
    for (String n : named.keySet()) {
      if (!known.contains(n)) {
        throw new IllegalArgumentException("unknown argument '" + n + "'");
      }
    }
  }

  private int integer(int i) {
    try {
      return Integer.parseInt(positional.get(i));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not an integer: '" + positional.get(i) + "'");
    }
  }

  private ResampleFilter filter() {
    String f = named.getOrDefault("filter", "bilinear");
    try {
      return ResampleFilter.valueOf(f.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("unknown filter '" + f + "' (bilinear, bicubic, box)");
    }
  }

  private double[] range(String key, double min, double max) {
    String v = named.get(key);
    if (v == null) {
      return new double[] {min, max};
    }
    String[] p = v.split(":");
    if (p.length != 2) {
      throw new IllegalArgumentException(key + " must be MIN:MAX, got '" + v + "'");
    }
    return new double[] {number(p[0]), number(p[1])};
  }

  private float[] triple(String key, float[] fallback) {
    String v = named.get(key);
    if (v == null) {
      return fallback;
    }
    String[] p = v.split(":");
    if (p.length != 3) {
      throw new IllegalArgumentException(key + " must be R:G:B, got '" + v + "'");
    }
    return new float[] {(float) number(p[0]), (float) number(p[1]), (float) number(p[2])};
  }

  /** A decimal or a fraction such as {@code 4/3}. */
  static double number(String s) {
    try {
      int slash = s.indexOf('/');
      return slash < 0
          ? Double.parseDouble(s.trim())
          : Double.parseDouble(s.substring(0, slash).trim())
              / Double.parseDouble(s.substring(slash + 1).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a number: '" + s + "'");
    }
  }
}
