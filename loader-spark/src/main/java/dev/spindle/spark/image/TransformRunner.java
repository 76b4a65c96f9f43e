package dev.spindle.spark.image;

import java.util.List;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Carries out what {@link ImageTransform} planned for one image: decodes it (only the region the
 * resample reads, by {@link NativeJpeg}, or whole, by {@link OpenCvDecoder}), turns it upright,
 * runs the planned stages (the last one on the vector path, {@link VectorResample}, where it can;
 * else {@link StageRunner}) and writes the output through the transform's {@link OutputWriter}.
 * Limits, the random stream and the plan are the transform's, settled before this runs.
 *
 * <p>Stateless: static methods, called from {@link ImageTransform}'s {@code apply} on the calling
 * thread, by any number of threads at once. Buffers come from the calling thread's {@link
 * DecodeScratch}; {@code dst} is the caller's, written only in the transform's {@code
 * outputBytes()} from {@code dstOffset}.
 */
final class TransformRunner {
  private TransformRunner() {}

  /**
   * Decodes the image in {@code data} and runs {@code stages} (planned for it, at {@code 1 /
   * reduce} scale for the first) on it; the last one writes {@code t}'s output at {@code
   * dst[dstOffset]}. When {@code direct} (the vector path or the native resample at {@code
   * nativeLevel}, one resample stage without padding, an upright image) the resample reads the
   * decoder's buffer (the native resample: fused with the native region decode, or OpenCV's native
   * buffer); otherwise the decoded image is turned by {@code orientation} and the stages run one by
   * one, the last on the vector path when {@code vector} and it does not pad.
   */
  static void run(
      ImageTransform t,
      byte[] data,
      int offset,
      int length,
      DecodeCost cost,
      int orientation,
      List<Stage> stages,
      int reduce,
      boolean direct,
      boolean vector,
      boolean permute,
      boolean nativeJpeg,
      int nativeLevel,
      DecodeScratch scratch,
      ArrowBuf dst,
      long dstOffset)
      throws ImageException {
    OutputWriter writer = t.writer();
    if (direct) {
      // the common case: one resample, straight from the decoder's buffer into dst
      Stage stage = stages.get(0);
      checkSize(t, stage);
      int level =
          nativeLevel >= 0 && NativeResample.canWrite(writer, dst, dstOffset) ? nativeLevel : -1;
      if (cost.info().format() == ImageFormat.JPEG
          && nativeJpeg
          && (vector || level >= 0)
          && regionDecode(
              writer, data, offset, length, cost, reduce, stage, scratch, permute, level, dst,
              dstOffset)) {
        return;
      }
      int r = reduce;
      OpenCvDecoder.decodeWith(
          data,
          offset,
          length,
          cost,
          reduce,
          scratch,
          (rgb, w, h) -> {
            if (level >= 0 && rgb.isDirect()) {
              NativeResample.fromMemory(
                  stage, rgb, w, h, r, writer, dst, dstOffset, level, scratch);
            } else if (vector) {
              VectorResample.run(stage, rgb, w, h, r, writer, dst, dstOffset, permute, scratch);
            } else { // neither can take this buffer (a conversion's copy on the heap, say)
              byte[] pixels =
                  rgb.hasArray()
                      ? rgb.array()
                      : scratch.bytes(DecodeScratch.Slot.PIXELS, rgb.capacity());
              if (!rgb.hasArray()) {
                rgb.get(0, pixels, 0, rgb.capacity());
              }
              runStages(
                  t,
                  new DecodedImage(pixels, w, h),
                  stages,
                  r,
                  false,
                  permute,
                  scratch,
                  dst,
                  dstOffset);
            }
            return null;
          });
      return;
    }
    DecodedImage image = OpenCvDecoder.decode(data, offset, length, cost, reduce, scratch);
    if (orientation != Orientation.NORMAL) {
      image =
          Orientation.apply(
              image,
              orientation,
              scratch.bytes(DecodeScratch.Slot.ORIENTED, image.pixels().length));
    }
    runStages(t, image, stages, reduce, vector, permute, scratch, dst, dstOffset);
  }

  /**
   * Runs {@code stages} one by one on the upright {@code image}, the last on the vector path when
   * {@code vector} and it does not pad, and writes the output.
   */
  private static void runStages(
      ImageTransform t,
      DecodedImage image,
      List<Stage> stages,
      int reduce,
      boolean vector,
      boolean permute,
      DecodeScratch scratch,
      ArrowBuf dst,
      long dstOffset) {
    OutputWriter writer = t.writer();
    for (int i = 0; i < stages.size(); i++) {
      Stage stage = stages.get(i);
      Stage.Rect win = stage.window();
      boolean last = i == stages.size() - 1;
      if (last) {
        checkSize(t, stage);
      }
      if (last && vector && !stage.pads()) {
        VectorResample.run(
            stage, image, i == 0 ? reduce : 1, writer, dst, dstOffset, permute, scratch);
        return;
      }
      DecodeScratch.Slot slot =
          last
              ? DecodeScratch.Slot.OUTPUT
              : (i % 2 == 0 ? DecodeScratch.Slot.STAGE_A : DecodeScratch.Slot.STAGE_B);
      byte[] out = scratch.bytes(slot, win.width() * win.height() * 3);
      StageRunner.run(stage, image, i == 0 ? reduce : 1, out, scratch);
      image = new DecodedImage(out, win.width(), win.height());
    }
    writer.write(image.pixels(), t.width(), t.height(), dst, dstOffset, scratch);
  }

  /**
   * Decodes only the part of a JPEG that {@code stage} reads ({@link NativeJpeg}) and resamples it
   * into {@code dst} through {@code writer}: the same bytes as a whole-image decode. False, having
   * done nothing, for a JPEG the native decoder leaves to OpenCV. Corrupt data is refused as on the
   * OpenCV path: a missing end of image before decoding, incomplete scans when libjpeg-turbo warned
   * while decoding the region (data it never reads, below the region, it cannot judge).
   */
  private static boolean regionDecode(
      OutputWriter writer,
      byte[] data,
      int offset,
      int length,
      DecodeCost cost,
      int reduce,
      Stage stage,
      DecodeScratch scratch,
      boolean permute,
      int level,
      ArrowBuf dst,
      long dstOffset)
      throws ImageException {
    JpegScanCheck.requireEndOfImage(data, offset, length, cost.firstScan());
    ImageInfo info = cost.info();
    int w = (info.width() + reduce - 1) / reduce; // libjpeg's scaled size: rounded up
    int h = (info.height() + reduce - 1) / reduce;
    int[] need = VectorResample.sourceRegion(stage, w, h, reduce, scratch);
    try (NativeJpeg.Band band =
        NativeJpeg.open(
            data,
            offset,
            length,
            reduce,
            cost.frame().progressive(),
            need[0],
            need[1],
            need[2],
            need[3],
            scratch)) {
      if (band == null) {
        return false;
      }
      if (band.width != w || band.height != h) { // a second frame header, say
        throw new ImageException(
            "Corrupt JPEG: its headers declare "
                + info.width()
                + "x"
                + info.height()
                + " but it decodes as "
                + band.width
                + "x"
                + band.height
                + (reduce > 1 ? " at 1/" + reduce + " scale" : ""));
      }
      if (level >= 0) { // decodes, resamples and writes row by row, natively
        NativeResample.fused(stage, band, w, h, reduce, writer, dst, dstOffset, level, scratch);
      } else { // decodes band by band as the resample asks for rows
        VectorResample.run(
            stage, band, w, h, band.region, reduce, writer, dst, dstOffset, permute, scratch);
      }
      if (band.warnings() > 0) { // dst is then the caller's to discard
        JpegScanCheck.requireCompleteScans(data, offset, length, cost.frame());
      }
    }
    return true;
  }

  /** Fails (a bug) when the last stage's output is not {@code t}'s output size. */
  private static void checkSize(ImageTransform t, Stage last) {
    Stage.Rect win = last.window();
    if (win.width() != t.width() || win.height() != t.height()) {
      throw new IllegalStateException(
          "Transform "
              + t.spec()
              + " produced "
              + win.width()
              + "x"
              + win.height()
              + ", expected "
              + t.width()
              + "x"
              + t.height());
    }
  }
}
