package dev.spindle.spark.image;

import static org.bytedeco.opencv.global.opencv_core.CV_16UC3;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC3;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC4;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ShortBuffer;
import org.bytedeco.opencv.global.opencv_imgcodecs;
import org.bytedeco.opencv.opencv_core.Mat;

/**
 * How OpenCV's decode of one image becomes the RGB bytes Pillow's {@code convert("RGB")} gives, for
 * the formats where OpenCV's own conversion differs from Pillow's (each measured against Pillow
 * 9.4): which {@code imdecode} flags to ask for, and what to do with the result. Immutable; any
 * thread.
 *
 * <ul>
 *   <li>{@link #NONE}: OpenCV's RGB is Pillow's (JPEG, PNG, most of the others).
 *   <li>{@link #tables}: a table per channel over OpenCV's RGB, in place: 16-bit BMPs (OpenCV
 *       shifts 5 bits left, Pillow scales {@code v * 255 / 31}), PNMs whose maximum is not 255
 *       (OpenCV keeps or truncates raw samples, Pillow rounds {@code v / maxval * 255}).
 *   <li>{@link #deep}: 16-bit colour samples, asked for as such ({@code IMREAD_ANYDEPTH}) and
 *       scaled to 8 bits as Pillow does for the format: its high byte (TIFF) or {@code round(v /
 *       maxval * 255)} (PPM). Asked for in BGR order: OpenCV 4.13's 16-bit RGB TIFF path copies
 *       rows the wrong way round ({@code memcpy(buffer16, img.ptr(...), ...)}).
 *   <li>{@link #gif}: OpenCV paints a GIF's first frame on a canvas of its background colour and
 *       leaves transparent pixels at it; Pillow maps every pixel through the frame's palette and
 *       fills the rest of the screen with its transparent (else first) colour. Asked for {@code
 *       IMREAD_UNCHANGED}: BGRA when the GIF has transparency (alpha 0 marks what Pillow fills),
 *       else BGR (what lies outside the frame is filled).
 * </ul>
 */
final class RgbConversion {
  private enum Kind {
    NONE,
    TABLES,
    DEEP,
    GIF
  }

  /** OpenCV's RGB as it is. */
  static final RgbConversion NONE = new RgbConversion(Kind.NONE, null, 0, 0, null);

  /** 3-channel RGB, 8-bit, stored orientation (Spindle applies EXIF orientation itself). */
  static final int RGB_FLAGS =
      opencv_imgcodecs.IMREAD_COLOR_RGB | opencv_imgcodecs.IMREAD_IGNORE_ORIENTATION;

  private static final int DEEP_FLAGS =
      opencv_imgcodecs.IMREAD_COLOR_BGR
          | opencv_imgcodecs.IMREAD_ANYDEPTH
          | opencv_imgcodecs.IMREAD_IGNORE_ORIENTATION;

  private final Kind kind;
  private final byte[][] tables;
  private final int maxval;
  private final int fill;
  private final int[] frame;

  private RgbConversion(Kind kind, byte[][] tables, int maxval, int fill, int[] frame) {
    this.kind = kind;
    this.tables = tables;
    this.maxval = maxval;
    this.fill = fill;
    this.frame = frame;
  }

  /** Each of OpenCV's red, green and blue bytes {@code v} becomes {@code red[v]}, and so on. */
  static RgbConversion tables(byte[] red, byte[] green, byte[] blue) {
    return new RgbConversion(Kind.TABLES, new byte[][] {red, green, blue}, 0, 0, null);
  }

  /**
   * 16-bit samples {@code v} become {@code v >>> 8} when {@code maxval} is 0 (Pillow's {@code
   * RGB;16} modes), else {@code min(255, round(v / maxval * 255))}, rounding half to even in double
   * precision as Python's {@code round} (Pillow's PPM decoder).
   */
  static RgbConversion deep(int maxval) {
    return new RgbConversion(Kind.DEEP, null, maxval, 0, null);
  }

  /**
   * A GIF's first frame at {@code (left, top)}, {@code width x height}; {@code fillRgb} ({@code
   * 0xRRGGBB}) is the colour Pillow gives its transparent pixels and the screen outside it.
   */
  static RgbConversion gif(int fillRgb, int left, int top, int width, int height) {
    return new RgbConversion(Kind.GIF, null, 0, fillRgb, new int[] {left, top, width, height});
  }

  /** The {@code imdecode} flags (reduced-scale bits aside) this conversion reads. */
  int flags() {
    return switch (kind) {
      case NONE, TABLES -> RGB_FLAGS;
      case DEEP -> DEEP_FLAGS;
      case GIF -> opencv_imgcodecs.IMREAD_UNCHANGED;
    };
  }

  /** Whether {@code type} is a decoder output type this conversion reads. */
  boolean accepts(int type) {
    return switch (kind) {
      case NONE, TABLES -> type == CV_8UC3;
      case DEEP -> type == CV_16UC3;
      case GIF -> type == CV_8UC3 || type == CV_8UC4;
    };
  }

  /**
   * Pillow's RGB of {@code image} ({@code width x height}, of a type this {@link #accepts}): {@code
   * width * height * 3} bytes from position 0, in the decoder's buffer ({@link #NONE}, {@link
   * #tables}) or in the thread's scratch; valid until this thread's next decode.
   */
  ByteBuffer apply(Mat image, int width, int height, DecodeScratch scratch) {
    int bytes = Math.multiplyExact(Math.multiplyExact(width, height), 3);
    if (kind == Kind.NONE || kind == Kind.TABLES) {
      ByteBuffer rgb = view(image, bytes);
      if (kind == Kind.TABLES) {
        for (int i = 0; i < bytes; i++) {
          rgb.put(i, tables[i % 3][rgb.get(i) & 0xFF]);
        }
      }
      return rgb;
    }
    byte[] out = scratch.bytes(DecodeScratch.Slot.FORMAT_RGB, bytes);
    if (kind == Kind.DEEP) {
      scaleDeep(view(image, 2 * bytes).order(ByteOrder.nativeOrder()).asShortBuffer(), out, bytes);
    } else if (image.channels() == 4) {
      gifWithAlpha(view(image, 4 * (bytes / 3)), out);
    } else {
      gifOpaque(view(image, bytes), out, width, height);
    }
    return ByteBuffer.wrap(out, 0, bytes);
  }

  private static ByteBuffer view(Mat image, int bytes) {
    return image.data().position(0).capacity(bytes).limit(bytes).asByteBuffer();
  }

  /** BGR 16-bit to RGB 8-bit: {@code n} samples ({@code out} may be longer, a reused buffer). */
  private void scaleDeep(ShortBuffer bgr, byte[] out, int n) {
    for (int i = 0; i < n; i += 3) {
      out[i] = scale(bgr.get(i + 2) & 0xFFFF);
      out[i + 1] = scale(bgr.get(i + 1) & 0xFFFF);
      out[i + 2] = scale(bgr.get(i) & 0xFFFF);
    }
  }

  private byte scale(int v) {
    if (maxval == 0) {
      return (byte) (v >>> 8);
    }
    return (byte) Math.min(255, (int) Math.rint((double) v / maxval * 255));
  }

  private void gifWithAlpha(ByteBuffer bgra, byte[] out) {
    int n = bgra.capacity() / 4;
    for (int i = 0; i < n; i++) {
      int s = 4 * i;
      int d = 3 * i;
      if (bgra.get(s + 3) == 0) {
        putFill(out, d);
      } else {
        out[d] = bgra.get(s + 2);
        out[d + 1] = bgra.get(s + 1);
        out[d + 2] = bgra.get(s);
      }
    }
  }

  private void gifOpaque(ByteBuffer bgr, byte[] out, int width, int height) {
    for (int y = 0; y < height; y++) {
      boolean rowInside = y >= frame[1] && y < frame[1] + frame[3];
      for (int x = 0; x < width; x++) {
        int d = 3 * (y * width + x);
        if (rowInside && x >= frame[0] && x < frame[0] + frame[2]) {
          out[d] = bgr.get(d + 2);
          out[d + 1] = bgr.get(d + 1);
          out[d + 2] = bgr.get(d);
        } else {
          putFill(out, d);
        }
      }
    }
  }

  private void putFill(byte[] out, int d) {
    out[d] = (byte) (fill >>> 16);
    out[d + 1] = (byte) (fill >>> 8);
    out[d + 2] = (byte) fill;
  }
}
