package dev.spindle.spark.image;

import org.bytedeco.javacpp.BytePointer;

/**
 * Per-thread reusable buffers for decoding and resampling, so the steady path allocates nothing.
 * Confined to one thread (see {@link #current()}). Buffers grown past {@link #KEEP_BYTES} for an
 * unusually large image are dropped after use so one huge sample does not pin memory per thread.
 */
final class DecodeScratch {
  static final int KEEP_BYTES = 64 << 20;

  private static final ThreadLocal<DecodeScratch> CURRENT =
      ThreadLocal.withInitial(DecodeScratch::new);

  private BytePointer encoded;
  private byte[] pixels = new byte[0];
  private byte[] rows = new byte[0];
  private byte[] output = new byte[0];

  static DecodeScratch current() {
    return CURRENT.get();
  }

  /** Native buffer of at least {@code bytes} for the encoded input. */
  BytePointer encoded(int bytes) {
    if (encoded == null || encoded.capacity() < bytes) {
      release();
      encoded = new BytePointer(Math.max(bytes, 1 << 20));
    }
    return encoded;
  }

  byte[] pixels(int bytes) {
    if (pixels.length < bytes) {
      pixels = new byte[bytes];
    }
    return pixels;
  }

  byte[] rows(int bytes) {
    if (rows.length < bytes) {
      rows = new byte[bytes];
    }
    return rows;
  }

  byte[] output(int bytes) {
    if (output.length < bytes) {
      output = new byte[bytes];
    }
    return output;
  }

  /** Drops buffers that one unusually large image grew past {@link #KEEP_BYTES}. */
  void trim() {
    if (encoded != null && encoded.capacity() > KEEP_BYTES) {
      release();
    }
    if (pixels.length > KEEP_BYTES) {
      pixels = new byte[0];
    }
    if (rows.length > KEEP_BYTES) {
      rows = new byte[0];
    }
  }

  private void release() {
    if (encoded != null) {
      encoded.close();
      encoded = null;
    }
  }
}
