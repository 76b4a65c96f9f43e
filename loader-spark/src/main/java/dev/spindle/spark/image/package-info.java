/**
 * Image decode and preprocessing: encoded JPEG/PNG bytes in, fixed-size uint8 RGB pixels out,
 * written straight into the batch's Arrow buffer.
 *
 * <pre>
 *  encoded bytes ──► ImageInfo.probe ──► maxPixels check ──► OpenCvDecoder (imdecode, RGB)
 *                    (header only)       (before any          │ per-thread DecodeScratch
 *                                          pixel memory)      ▼
 *                      PillowResample (horizontal, then vertical pass, crop window only)
 *                                                             ▼
 *                                   ArrowBuf at dstOffset (HWC uint8, outputBytes())
 * </pre>
 *
 * <p>Runs on the executor's CPU pool threads: {@link dev.spindle.spark.image.ImageTransform} is
 * immutable and called by many threads at once; every buffer it uses is thread-local. OpenCV's
 * own threading is switched off, Spindle owns the threads. Failures surface as {@link
 * dev.spindle.spark.image.ImageException} with a user-facing reason; the caller quarantines the
 * sample with its shard and key.
 *
 * <p>Results match torchvision on PIL images: decode is libjpeg-turbo's (bit-identical), resizing
 * is Pillow's fixed-point resampler, sizes and crop offsets are torchvision's formulas.
 */
package dev.spindle.spark.image;
