package dev.spindle.gpu.device;

import java.util.Arrays;

/**
 * How uint8 HWC images become the tensor a trainer leases: {@code out[n][c][y][x] =
 * fma(in[n][y][x][c], scale[c], bias[c])} with {@code scale[c] = 1 / (255 * std[c])} and {@code
 * bias[c] = -mean[c] / std[c]}, rounded to {@link #type()}; for {@link ElementType#UINT8} the bytes
 * pass through unchanged. Mean and std are in [0, 1] units (ImageNet: 0.485, 0.456, 0.406 / 0.229,
 * 0.224, 0.225). The CUDA kernel and the host path use the same float table and a fused
 * multiply-add, so they agree bit for bit.
 *
 * <p>Immutable value; safe to share between threads.
 */
public record NormalizeSpec(
    ElementType type, int height, int width, int channels, float[] mean, float[] std) {

  /** Validates and copies the arrays. */
  public NormalizeSpec {
    if (type == null) {
      throw new IllegalArgumentException("Invalid element type: null");
    }
    checkPositive("height", height);
    checkPositive("width", width);
    checkPositive("channels", channels);
    mean = checkChannels("mean", mean, channels).clone();
    std = checkChannels("std", std, channels).clone();
    for (float s : std) {
      if (!(s > 0f) || Float.isInfinite(s)) {
        throw new IllegalArgumentException("Invalid std: " + s + " (must be finite and > 0)");
      }
    }
    if ((long) height * width * channels > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "Invalid image shape: " + height + "x" + width + "x" + channels + " (too large)");
    }
  }

  /** Raw uint8 images of the given shape, no normalisation. */
  public static NormalizeSpec raw(int height, int width, int channels) {
    float[] zero = new float[channels];
    float[] one = new float[channels];
    Arrays.fill(one, 1f);
    return new NormalizeSpec(ElementType.UINT8, height, width, channels, zero, one);
  }

  /** Normalisation with ImageNet's mean and std (3 channels). */
  public static NormalizeSpec imagenet(ElementType type, int height, int width) {
    return new NormalizeSpec(
        type,
        height,
        width,
        3,
        new float[] {0.485f, 0.456f, 0.406f},
        new float[] {0.229f, 0.224f, 0.225f});
  }

  /** Pixels per image ({@code height * width}). */
  public int pixels() {
    return height * width;
  }

  /** Bytes of one uint8 HWC input image. */
  public int inputBytesPerImage() {
    return pixels() * channels;
  }

  /** Bytes of one output image in {@link #type()}. */
  public long outputBytesPerImage() {
    return (long) inputBytesPerImage() * type.bytes();
  }

  /** {@code channels} scales followed by {@code channels} biases, as used by both paths. */
  public float[] table() {
    float[] t = new float[2 * channels];
    for (int c = 0; c < channels; c++) {
      t[c] = 1f / (255f * std[c]);
      t[channels + c] = -mean[c] / std[c];
    }
    return t;
  }

  @Override
  public float[] mean() {
    return mean.clone();
  }

  @Override
  public float[] std() {
    return std.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NormalizeSpec s
        && type == s.type
        && height == s.height
        && width == s.width
        && channels == s.channels
        && Arrays.equals(mean, s.mean)
        && Arrays.equals(std, s.std);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * type.hashCode() + height * 7919 + width * 31 + channels)
        + Arrays.hashCode(mean) * 17
        + Arrays.hashCode(std);
  }

  @Override
  public String toString() {
    return "NormalizeSpec["
        + type
        + " "
        + height
        + "x"
        + width
        + "x"
        + channels
        + " mean="
        + Arrays.toString(mean)
        + " std="
        + Arrays.toString(std)
        + "]";
  }

  private static void checkPositive(String what, int v) {
    if (v <= 0) {
      throw new IllegalArgumentException("Invalid " + what + ": " + v + " (must be > 0)");
    }
  }

  private static float[] checkChannels(String what, float[] v, int channels) {
    if (v == null || v.length != channels) {
      throw new IllegalArgumentException(
          "Invalid "
              + what
              + ": "
              + (v == null ? "null" : Arrays.toString(v))
              + " (must have "
              + channels
              + " values, one per channel)");
    }
    return v;
  }
}
