package dev.spindle.spark.image;

import java.util.Arrays;
import java.util.Objects;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The full decode entry under fuzzing: {@link ImageTransform#apply} on an encoded image (JPEG or
 * PNG), with the decoder chosen by the target ({@link NativeDecodeFuzz}: Spindle's native
 * libjpeg-turbo region decoder; {@link OpenCvDecodeFuzz}: OpenCV). Three transforms, picked by the
 * input's length, reach the direct one-resample path, the random-crop path (full decode, EXIF turn,
 * several stages) and a reduced-scale decode; the direct path's resample is native (C) for half the
 * inputs. The property: a result or {@link ImageException}, nothing else, and with the native
 * decoder the same result or refusal when the same bytes are decoded again (from the seek index the
 * first decode recorded, {@link JpegSeekIndex}); every decode stays within the declared {@link
 * #MAX_DECODE_BYTES} and {@link #MAX_PIXELS} (the child JVM's heap and RSS limits are set from
 * them, see {@code FuzzTarget}); no JVM crash in the native code. One thread.
 */
final class DecodeFuzz {
  /** The decode budget declared to the transform ({@code spark.spindle.image.maxDecodeBytes}). */
  static final long MAX_DECODE_BYTES = 64L << 20;

  static final long MAX_PIXELS = 16L << 20;

  private static final ImageTransform[] TRANSFORMS = {
    limited(ImageTransform.parse("resize(16),center_crop(16)")),
    limited(ImageTransform.parse("random_resized_crop(12),hflip,normalize")),
    limited(ImageTransform.parse("resize(8),center_crop(8)").withReducedDecode(true)),
  };
  private static final BufferAllocator ALLOCATOR = new RootAllocator(1 << 20);
  private static final ArrowBuf OUT = ALLOCATOR.buffer(maxOutputBytes());

  private DecodeFuzz() {}

  private static ImageTransform limited(ImageTransform t) {
    return t.withMaxDecodeBytes(MAX_DECODE_BYTES).withMaxPixels(MAX_PIXELS);
  }

  private static long maxOutputBytes() {
    long max = 0;
    for (ImageTransform t : TRANSFORMS) {
      max = Math.max(max, t.outputBytes());
    }
    return max;
  }

  /**
   * Decodes and transforms {@code data}; ImageException is the documented refusal. Every other
   * input (by length) takes the native resample where the library has it ({@link NativeResample}:
   * fused with the native decoder, or on OpenCV's buffer), the others the Java one.
   */
  static void run(byte[] data, boolean nativeJpeg) {
    ImageTransform t = TRANSFORMS[data.length % TRANSFORMS.length];
    int level = data.length / TRANSFORMS.length % 2 == 0 ? NativeResample.BEST : -1;
    String first = once(t, data, nativeJpeg, level);
    if (!nativeJpeg) {
      return;
    }
    // the same bytes again: the native decoder now resumes from the seek index the first decode
    // recorded (JpegSeekIndex), and must give the same pixels, or the same refusal
    byte[] pixels = first == null ? output(t) : null;
    String second = once(t, data, nativeJpeg, level);
    if (!Objects.equals(first, second) || (first == null && !Arrays.equals(pixels, output(t)))) {
      throw new IllegalStateException(
          "Decoding the same bytes twice differed: first "
              + (first == null ? "decoded" : "refused (" + first + ")")
              + ", then "
              + (second == null ? "decoded" : "refused (" + second + ")"));
    }
  }

  /** Null when {@code t} decodes {@code data} into OUT, else the refusal's message. */
  private static String once(ImageTransform t, byte[] data, boolean nativeJpeg, int level) {
    OUT.setZero(0, OUT.capacity());
    try {
      t.apply(data, 0, data.length, data.length, OUT, 0, true, true, nativeJpeg, level);
      return null;
    } catch (ImageException e) {
      return e.getMessage(); // refused: corrupt, truncated, unsupported or over the limits
    }
  }

  private static byte[] output(ImageTransform t) {
    byte[] out = new byte[Math.toIntExact(t.outputBytes())];
    OUT.getBytes(0, out);
    return out;
  }
}
