/**
 * Image decode and preprocessing: encoded JPEG/PNG bytes in, fixed-size RGB tensors out (uint8
 * HWC/CHW, or normalised float32/float16 CHW), written straight into a batch's Arrow buffer.
 *
 * <pre>
 *  encoded bytes ─► ImageInfo.probe ─► maxPixels ─► StagePlanner ─► ReducedDecode ─► OpenCvDecoder
 *                   (header only;      (refused     (ops → stages;   (1/2,1/4,1/8     (imdecode RGB;
 *                    EXIF orientation)  before any    random ops:     for JPEGs a      per-thread
 *                                       pixel memory) SampleRandom)   resize shrinks)  DecodeScratch)
 *        ─► Orientation ─► StageRunner × stages (PillowResample: horizontal, then vertical pass,
 *                                                 crop window only; zero padding; flip)
 *        ─► OutputWriter (layout, ToTensor + Normalize tables) ─► ArrowBuf at dstOffset
 * </pre>
 *
 * <p><b>API.</b> {@link dev.spindle.spark.image.ImageTransform} (a chain parsed from a spec such as
 * {@code "resize(256),center_crop(224),normalize"} or built by {@code resizeCenterCrop}), {@link
 * dev.spindle.spark.image.ImageConfig} (the {@code spark.spindle.image.*} keys), {@link
 * dev.spindle.spark.image.ImageInfo}, {@link dev.spindle.spark.image.ImageFormat}, {@link
 * dev.spindle.spark.image.OutputMode}, {@link dev.spindle.spark.image.ImageException}, and {@link
 * dev.spindle.spark.image.ImageBench} (the {@code bin/spindle bench images} entry point; it runs
 * on {@code EngineLoader}, the executor engine, or {@code BatchLoader}, a plain pool).
 *
 * <p><b>Threads.</b> Runs on the executor's CPU pool: an {@code ImageTransform} is immutable and
 * called by many threads at once; every buffer it uses is thread-local and reused. OpenCV's own
 * threading is switched off; Spindle owns the threads. Random choices (random_resized_crop,
 * hflip) are a pure function of (seed, epoch, sample index), never of scheduling.
 *
 * <p><b>Failures.</b> A sample that cannot be decoded (unknown format, truncated or garbled data,
 * too many pixels) raises {@link dev.spindle.spark.image.ImageException} with a user-facing reason;
 * the caller quarantines it with its shard and key. Bugs stay unchecked exceptions.
 *
 * <p><b>Exactness.</b> Decode is libjpeg-turbo's (bit-identical); resampling is Pillow's
 * fixed-point {@code ImagingResample} (bilinear, bicubic, box); sizes, crop offsets, padding and
 * RandomResizedCrop's sampling are torchvision 0.14's formulas; float outputs use torch's float32
 * operations. GoldenImageSuite and TorchvisionComparisonSuite check it against Pillow and
 * torchvision. Known differences: CMYK JPEGs (OpenCV's integer CMYK→RGB, within 2 steps), 16-bit
 * gray PNGs (high byte kept; Pillow clips), reduced-size decode (off by default; when switched on,
 * only for JPEGs a resize shrinks at least 2×), and random streams (same algorithm, not torch's generator).
 */
package dev.spindle.spark.image;
