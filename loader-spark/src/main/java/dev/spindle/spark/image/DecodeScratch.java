package dev.spindle.spark.image;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.opencv.opencv_core.Mat;

/**
 * Per-thread reusable buffers for decoding, resampling and output conversion, so the steady path
 * allocates no pixel memory. Confined to one thread (see {@link #current()}). Buffers grown past
 * {@link #KEEP_BYTES} for an unusually large image are dropped after use, so one huge sample does
 * not pin memory on every thread. The native buffers live as long as their thread.
 */
final class DecodeScratch {
  static final int KEEP_BYTES = 64 << 20;

  /** Resample kernels kept per thread: a few image sizes and transforms' worth. */
  static final int KEEP_KERNELS = 16;

  /** What a byte buffer is used for; two uses never share one within an image. */
  enum Slot {
    PIXELS,
    /** {@link RgbConversion}'s output, when it is not the decoder's buffer. */
    FORMAT_RGB,
    ORIENTED,
    WINDOW,
    STAGE_A,
    STAGE_B,
    OUTPUT,
    CONVERTED,
    /** {@link VectorResample}: horizontal pass output, planar. */
    PLANAR,
    /** {@link VectorResample}: an 8-row block of horizontal pass output, transposed. */
    BLOCK,
    /** {@link VectorResample}: an 8-row block of source bytes, transposed. */
    TRANSPOSED,
    /** {@link VectorResample}: one output row of the three channels. */
    ROW
  }

  /** What an int buffer is used for. */
  enum IntSlot {
    ROW,
    ROWS,
    ACCUMULATOR,
    /** {@link VectorResample}: per output column, its first tap in a transposed block. */
    COLUMNS,
    /** {@link VectorResample}: per output column, its weights. */
    WEIGHTS,
    /** {@link VectorResample}: the source rows it reads, 4 bytes per int. */
    WORDS,
    /** {@link VectorResample}: gather offsets of 8 rows. */
    GATHER,
    /** {@link VectorVerticalPass}: an output row's pixels packed one per int, for uint8 HWC. */
    PIXELS
  }

  private static final ThreadLocal<DecodeScratch> CURRENT =
      ThreadLocal.withInitial(DecodeScratch::new);

  private final Map<Slot, byte[]> bytes = new EnumMap<>(Slot.class);
  private final Map<IntSlot, int[]> ints = new EnumMap<>(IntSlot.class);
  private final Map<Object, PillowResample.Kernel> kernels =
      new LinkedHashMap<>(2 * KEEP_KERNELS, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, PillowResample.Kernel> eldest) {
          return size() > KEEP_KERNELS;
        }
      };
  private BytePointer encoded;
  private BytePointer region;
  private Mat decoded;
  private float[] floats = new float[0];
  private short[] shorts = new short[0];
  private long[] longs = new long[0];

  static DecodeScratch current() {
    return CURRENT.get();
  }

  /** Frees this thread's buffers now (native ones included) rather than when it is collected. */
  static void discard() {
    DecodeScratch s = CURRENT.get();
    s.release();
    s.releaseRegion();
    if (s.decoded != null) {
      s.decoded.close();
      s.decoded = null;
    }
    CURRENT.remove();
  }

  /**
   * {@code data[offset, offset + length)} copied into this thread's native buffer for the encoded
   * input (grown as needed), from its position 0; valid until the next call.
   */
  BytePointer encoded(byte[] data, int offset, int length) {
    if (encoded == null || encoded.capacity() < length) {
      release();
      encoded = new BytePointer(Math.max(length, 1 << 20));
    }
    encoded.position(0).put(data, offset, length);
    return encoded;
  }

  /** Native buffer of at least {@code size} bytes for {@link NativeJpeg}'s decoded region. */
  BytePointer region(int size) {
    if (region == null || region.capacity() < size) {
      releaseRegion();
      region = new BytePointer(Math.max(size, 1 << 20));
    }
    return region;
  }

  /**
   * The decoder's output image, reused: OpenCV decodes into it again when size and type match, so a
   * steady stream of same-sized images allocates no pixel memory.
   */
  Mat decoded() {
    if (decoded == null) {
      decoded = new Mat();
    }
    return decoded;
  }

  /** A byte array of at least {@code size} for {@code slot}; contents are left over. */
  byte[] bytes(Slot slot, int size) {
    byte[] b = bytes.get(slot);
    if (b == null || b.length < size) {
      b = new byte[size];
      bytes.put(slot, b);
    }
    return b;
  }

  /**
   * The kernel for {@code key} (equal keys, equal kernels): computed by {@code compute} unless one
   * of the last {@link #KEEP_KERNELS} used on this thread has that key. Images of one size under a
   * deterministic transform (resize + center crop) then compute their kernels once per thread.
   */
  PillowResample.Kernel kernel(Object key, Supplier<PillowResample.Kernel> compute) {
    PillowResample.Kernel k = kernels.get(key);
    if (k == null) {
      k = compute.get();
      kernels.put(key, k);
    }
    return k;
  }

  /** An int array of at least {@code size} for {@code slot}; contents are left over. */
  int[] ints(IntSlot slot, int size) {
    int[] b = ints.get(slot);
    if (b == null || b.length < size) {
      b = new int[size];
      ints.put(slot, b);
    }
    return b;
  }

  /** The float output buffer, at least {@code size} long. */
  float[] floats(int size) {
    if (floats.length < size) {
      floats = new float[size];
    }
    return floats;
  }

  /** {@link VectorResample}'s source rows, 8 bytes per long: at least {@code size} long. */
  long[] longs(int size) {
    if (longs.length < size) {
      longs = new long[size];
    }
    return longs;
  }

  /** The half-precision output buffer, at least {@code size} long. */
  short[] shorts(int size) {
    if (shorts.length < size) {
      shorts = new short[size];
    }
    return shorts;
  }

  /** Drops buffers that one unusually large image grew past {@link #KEEP_BYTES}. */
  void trim() {
    if (encoded != null && encoded.capacity() > KEEP_BYTES) {
      release();
    }
    if (region != null && region.capacity() > KEEP_BYTES) {
      releaseRegion();
    }
    if (decoded != null && decoded.total() * decoded.elemSize() > KEEP_BYTES) {
      decoded.close();
      decoded = null;
    }
    bytes.values().removeIf(b -> b.length > KEEP_BYTES);
    ints.values().removeIf(b -> b.length > KEEP_BYTES / 4);
    if (floats.length > KEEP_BYTES / 4) {
      floats = new float[0];
    }
    if (shorts.length > KEEP_BYTES / 2) {
      shorts = new short[0];
    }
    if (longs.length > KEEP_BYTES / 8) {
      longs = new long[0];
    }
  }

  private void releaseRegion() {
    if (region != null) {
      region.close();
      region = null;
    }
  }

  private void release() {
    if (encoded != null) {
      encoded.close();
      encoded = null;
    }
  }
}
