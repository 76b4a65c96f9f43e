package dev.spindle.spark.image;

import java.io.Serializable;
import org.apache.arrow.memory.ArrowBuf;

/**
 * An immutable chain of image operations: decode, resize, crop, and write uint8 RGB HWC into an
 * Arrow buffer.
 *
 * <p>Any number of threads may call {@link #apply} at once on one instance: it keeps no mutable
 * state, and its decode and resample buffers are per thread (reused, so the steady path allocates
 * no pixel arrays). Serializable, so a Spark driver can build it and ship it to executors. The
 * caller owns {@code dst}; {@link #apply} only writes {@link #outputBytes()} bytes into it.
 */
public final class ImageTransform implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * Default for {@link #withMaxPixels}: Pillow's decompression-bomb limit ({@code 2 *
   * Image.MAX_IMAGE_PIXELS}), so whatever torchvision users can open, Spindle opens too.
   */
  public static final long DEFAULT_MAX_PIXELS = 2L * 89_478_485L;

  private final int size;
  private final long maxPixels;

  private ImageTransform(int size, long maxPixels) {
    this.size = size;
    this.maxPixels = maxPixels;
  }

  /**
   * Resizes the short side to {@code size} (Pillow bilinear with antialias, as {@code
   * torchvision.transforms.Resize(size)} on a PIL image), then centre-crops {@code size x size}
   * ({@code CenterCrop(size)}). Output: uint8 RGB, HWC.
   */
  public static ImageTransform resizeCenterCrop(int size) {
    if (size <= 0 || size > 16384) {
      throw new IllegalArgumentException("Invalid size: " + size + " (must be 1..16384)");
    }
    return new ImageTransform(size, DEFAULT_MAX_PIXELS);
  }

  /**
   * Images whose declared {@code width * height} exceeds {@code maxPixels} are refused with an
   * {@link ImageException} from the header alone, before any pixel memory is allocated.
   */
  public ImageTransform withMaxPixels(long maxPixels) {
    if (maxPixels <= 0) {
      throw new IllegalArgumentException("Invalid maxPixels: " + maxPixels + " (must be > 0)");
    }
    return new ImageTransform(size, maxPixels);
  }

  public long maxPixels() {
    return maxPixels;
  }

  public int height() {
    return size;
  }

  public int width() {
    return size;
  }

  public int channels() {
    return 3;
  }

  /** Bytes {@link #apply} writes per image: {@code height * width * channels}. */
  public long outputBytes() {
    return (long) height() * width() * channels();
  }

  /**
   * Decodes one encoded image (JPEG or PNG; gray, alpha, palette and 16-bit become RGB uint8),
   * transforms it and writes exactly {@link #outputBytes()} bytes at {@code dst[dstOffset]}.
   * Thread-safe. {@code sampleIndex} seeds the random operations (none yet in this chain).
   *
   * @throws ImageException when the sample cannot be decoded or is larger than {@link #maxPixels()}
   */
  public void apply(
      byte[] data, int offset, int length, long sampleIndex, ArrowBuf dst, long dstOffset)
      throws ImageException {
    int bytes = (int) outputBytes();
    if (dst == null || dstOffset < 0 || dstOffset + bytes > dst.capacity()) {
      throw new IllegalArgumentException("Invalid destination: " + bytes + " bytes at offset "
          + dstOffset + " of " + (dst == null ? "null" : dst.capacity() + " bytes"));
    }
    ImageInfo info = ImageInfo.probe(data, offset, length);
    if (info.pixels() > maxPixels) {
      throw new ImageException(String.format(
          "Image too large: %dx%d = %d pixels (maxPixels %d)",
          info.width(), info.height(), info.pixels(), maxPixels));
    }
    DecodeScratch scratch = DecodeScratch.current();
    try {
      DecodedImage image = OpenCvDecoder.decode(data, offset, length, info,
          OpenCvDecoder.RGB | OpenCvDecoder.IGNORE_ORIENTATION, scratch);
      byte[] out = scratch.output(bytes);
      resizeCenterCrop(image, out, scratch);
      dst.setBytes(dstOffset, out, 0, bytes);
    } finally {
      scratch.trim();
    }
  }

  private void resizeCenterCrop(DecodedImage image, byte[] out, DecodeScratch scratch) {
    int[] resized = TorchvisionGeometry.resizeShortSide(image.width(), image.height(), size);
    Window crop = new Window(
        TorchvisionGeometry.centerOffset(resized[0], size),
        TorchvisionGeometry.centerOffset(resized[1], size),
        size, size);
    PillowResample.resizeWindow(
        image, resized[0], resized[1], crop, ResampleFilter.BILINEAR, scratch, out);
  }

  @Override
  public String toString() {
    return "ImageTransform[resize(" + size + "),center_crop(" + size + "),maxPixels=" + maxPixels
        + "]";
  }
}
