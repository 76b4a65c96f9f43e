package dev.spindle.spark.image;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The full decode entry under fuzzing: {@link ImageTransform#apply} on an encoded image (JPEG or
 * PNG), with the decoder chosen by the target ({@link NativeDecodeFuzz}: Spindle's native
 * libjpeg-turbo region decoder; {@link OpenCvDecodeFuzz}: OpenCV). Three transforms, picked by the
 * input's length, reach the direct one-resample path, the random-crop path (full decode, EXIF turn,
 * several stages) and a reduced-scale decode; the direct path's resample is native (C) for half the
 * inputs. The property: a result or {@link ImageException}, nothing else; every decode stays within
 * the declared {@link #MAX_DECODE_BYTES} and {@link #MAX_PIXELS} (the child JVM's heap and RSS
 * limits are set from them, see {@code FuzzTarget}); no JVM crash in the native code. One thread.
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
    try {
      t.apply(data, 0, data.length, data.length, OUT, 0, true, true, nativeJpeg, level);
    } catch (ImageException e) {
      // refused: corrupt, truncated, unsupported or over the limits
    }
  }
}
