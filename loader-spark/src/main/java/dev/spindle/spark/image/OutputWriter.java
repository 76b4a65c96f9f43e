package dev.spindle.spark.image;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Converts the final RGB HWC uint8 image into the {@link OutputMode} and writes it into the
 * destination Arrow buffer. Float values come from per-channel 256-entry tables built with the
 * same float32 operations as torchvision ({@code v / 255f}, then {@code (x - mean) / std}), so
 * they equal torch's values bit for bit. Immutable; any thread may call it.
 */
final class OutputWriter implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  private final OutputMode mode;
  private final float[][] floats;
  private final short[][] halves;

  OutputWriter(OutputMode mode, ImageOp.Normalize normalize) {
    this.mode = mode;
    this.floats = new float[3][256];
    this.halves = new short[3][256];
    for (int c = 0; c < 3; c++) {
      for (int v = 0; v < 256; v++) {
        float x = (float) v / 255f;
        if (normalize != null) {
          x = (x - normalize.mean()[c]) / normalize.std()[c];
        }
        floats[c][v] = x;
        halves[c][v] = Half.fromFloat(x);
      }
    }
  }

  OutputMode mode() {
    return mode;
  }

  /** Writes {@code width * height * 3} pixels from {@code rgb} at {@code dst[offset]}. */
  void write(byte[] rgb, int width, int height, ArrowBuf dst, long offset, DecodeScratch scratch) {
    int n = width * height * 3;
    if (mode == OutputMode.UINT8_HWC) {
      dst.setBytes(offset, rgb, 0, n);
      return;
    }
    byte[] out = scratch.bytes(DecodeScratch.Slot.CONVERTED, n * mode.bytesPerValue());
    ByteBuffer view = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
    int plane = width * height;
    for (int c = 0; c < 3; c++) {
      int base = c * plane;
      switch (mode) {
        case UINT8_CHW -> {
          for (int i = 0; i < plane; i++) {
            out[base + i] = rgb[i * 3 + c];
          }
        }
        case FLOAT32_CHW -> {
          float[] lut = floats[c];
          for (int i = 0; i < plane; i++) {
            view.putFloat((base + i) << 2, lut[rgb[i * 3 + c] & 0xFF]);
          }
        }
        default -> {
          short[] lut = halves[c];
          for (int i = 0; i < plane; i++) {
            view.putShort((base + i) << 1, lut[rgb[i * 3 + c] & 0xFF]);
          }
        }
      }
    }
    dst.setBytes(offset, out, 0, (long) n * mode.bytesPerValue());
  }
}
