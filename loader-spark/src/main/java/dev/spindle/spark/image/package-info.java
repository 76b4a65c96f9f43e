/**
 * Image decode and preprocessing: encoded JPEG, PNG, WebP, BMP, PNM, TIFF or GIF bytes in ({@link
 * dev.spindle.spark.image.ImageFormat}), fixed-size RGB tensors out (uint8 HWC/CHW, or normalised
 * float32/float16 CHW), written straight into a batch's Arrow buffer.
 *
 * <pre>
 *  encoded bytes ─► ImageInfo.probe ─► maxPixels ─► DecodeCost.of ─► StagePlanner
 *                   (header only;      (refused     (can the data   (ops → stages;
 *                    FormatHeader for   before any    hold what the   random ops:
 *                    BMP, PNM, TIFF,    pixel memory) header says?    SampleRandom)
 *                    WebP, GIF)                       orientation)
 *        ─► ReducedDecode ─► maxDecodeBytes ─► OpenCvDecoder ─► GreyTail ─► JpegScanCheck
 *           (1/2,1/4,1/8     (DecodeCost.bytes  (TiffStripCheck; (last block  (only then: read
 *            for JPEGs a      of the plan)       imdecode, then   mid-grey?)   the scans, refuse
 *            resize shrinks)                     RgbConversion;                missing data)
 *                                                per-thread
 *                                                DecodeScratch)
 *        ─► Orientation ─► StageRunner × stages (PillowResample: horizontal, then vertical pass,
 *                                                 crop window only; zero padding; flip)
 *        ─► OutputWriter (layout, ToTensor + Normalize tables) ─► ArrowBuf at dstOffset
 * </pre>
 *
 * <p>{@code ImageTransform} takes each image up to the decode budget (probe, limits, random stream,
 * stages); {@code TransformRunner} carries out the plan from the decoder on.
 *
 * <p><b>Vector path.</b> The common case (one resample stage without padding, upright image) runs
 * on {@code VectorResample} instead of {@code StageRunner} + {@code OutputWriter}: the same integer
 * arithmetic eight values at a time with the JDK Vector API (256-bit), reading the decoder's native
 * buffer directly and writing normalised floats straight into the Arrow buffer ({@code
 * VectorHorizontalPass}, then {@code VectorVerticalPass} fused with the output conversion; {@code
 * VectorTranspose} and {@code VectorLanes} shared by them). It is used when the JVM has {@code
 * --add-modules=jdk.incubator.vector} (Spindle's JVM flags add it) and the CPU has 256-bit vectors,
 * once C2 has compiled it: {@code ImageTransform.preload()} compiles it up front (about 1 s, once
 * per JVM); without that a background thread does while callers take the scalar path. Both paths
 * give the same bytes (VectorResampleSuite; the golden and torchvision suites run both).
 *
 * <p><b>Native path.</b> Where the native library loaded, the same common case can run in C ({@code
 * NativeResample}, {@code src/main/native/spindle_resample.c}): the region decode, both passes and
 * the output conversion fused row by row, written straight into the Arrow buffer, at the SIMD level
 * the CPU has (AVX2, SSE4.1, plain C). At AVX2 (with FMA) both passes run on 8 rows or columns at a
 * time, the horizontal one on transposed bytes as the vector path does, and an image costs about
 * 1.4 times less CPU than on the compiled vector path: there it is the default everywhere. At
 * SSE4.1 and plain C (one pixel at a time) it takes the scalar path's place wherever the vector
 * path does not run; {@code -Dspindle.image.nativeResample} runs it everywhere ({@code true} or a
 * level) or never ({@code false}). It also reads OpenCV's native buffer for other formats. Same
 * kernels ({@code PillowResample.Kernel}) and output tables ({@code OutputWriter}), so the same
 * bytes: the comparison suites run every level. The Java paths stay the pure-JVM fallback (no
 * library, an unaligned destination, a converted copy on the heap).
 *
 * <p><b>Seek index.</b> A sequential JPEG can only be Huffman-decoded from its start, so the region
 * decoder entropy-decodes every MCU above and beside the region: for a centre crop about half of
 * the Huffman decoding, the largest single cost of an image. The first decode of an image records,
 * every four MCUs of every row (those below its region Huffman-decoded for that alone), the state
 * libjpeg-turbo's Huffman decoder holds there (bit position, DC predictors: 8 bytes); later decodes
 * of the same bytes (the next epochs) restore it at each row's first MCU of the region and leave
 * the other MCUs undecoded ({@code JpegSeekIndex}, {@code src/main/native/spindle_seek.c}). Same
 * pixels ({@code NativeJpegSeekSuite}); 2 KB per 640x408 photo, on the heap, least recently used
 * dropped beyond a sixteenth of it; {@code -Dspindle.image.seekIndex=false} turns it off. Measured:
 * epochs 2 and 3 of 3 at 1.15 times the images/s for the eval transform, 1.19 times for the train
 * transform ({@code bin/bench-ab-seek-index}, docs/benchmarks.md).
 *
 * <p><b>API.</b> {@link dev.spindle.spark.image.ImageTransform} (a chain parsed from a spec such as
 * {@code "resize(256),center_crop(224),normalize"} or built by {@code resizeCenterCrop}; the {@code
 * spark.spindle.image.*} keys that describe one live in {@code
 * dev.spindle.spark.config.SpindleConfig}, which sits above this package), {@link
 * dev.spindle.spark.image.ImageInfo}, {@link dev.spindle.spark.image.ImageFormat}, {@link
 * dev.spindle.spark.image.OutputMode} and {@link dev.spindle.spark.image.ImageException}. The
 * benchmarks of this package ({@code ImageBench}, the {@code bin/spindle bench images} entry point,
 * with its loaders {@code EngineLoader} on the product's sample path and {@code BatchLoader}, and
 * {@code ImageStageBench}) are in the loader-bench module, in a package of this name.
 *
 * <p><b>Threads.</b> Runs on the executor's CPU pool: an {@code ImageTransform} is immutable and
 * called by many threads at once; every buffer it uses is thread-local and reused. OpenCV's own
 * threading is switched off; Spindle owns the threads. Random choices (random_resized_crop, hflip)
 * are a pure function of (seed, epoch, sample index), never of scheduling (see "Random operations"
 * below).
 *
 * <p><b>Failures.</b> A sample that cannot be decoded (unknown format, truncated or garbled data,
 * too many pixels, a variant decoded otherwise than Pillow decodes it) raises {@link
 * dev.spindle.spark.image.ImageException} with a user-facing reason; the caller quarantines it with
 * its shard and key. Bugs stay unchecked exceptions. Before any allocation, headers are checked
 * against the data (a JPEG's first scan must have at least 2 bits a block, 1 if progressive; a
 * PNG's data at least 1/1032 of its filtered image; a BMP's, PNM's and TIFF's uncompressed data
 * whole, a GIF's LZW data 3 bits per 4096 pixels, a WebP's RIFF length) and the decode's bytes
 * against {@code maxDecodeBytes}. OpenCV's 8-bit TIFF reader decodes past libtiff's errors: {@code
 * TiffStripCheck} first reads LZW, Deflate, PackBits and uncompressed strips as libtiff does and
 * refuses a corrupt one. libjpeg-turbo decodes missing data as grey with a warning OpenCV drops: an
 * image whose last block is mid-grey has its scans read ({@code JpegScanCheck}), and missing data
 * is refused. Still decoded without complaint: data missing from a progressive JPEG's AC scans,
 * from the final blocks only (the last block is not all grey) or before a restart marker libjpeg
 * resynchronises on; data cut or garbled so that every block still decodes; arithmetic-coded JPEGs.
 * Telling those apart needs libjpeg's warnings, from a decoder of Spindle's own.
 *
 * <p><b>Exactness.</b> Decode is libjpeg-turbo's (bit-identical); the other formats decode to the
 * bytes of torchvision's loader, {@code PIL.Image.open(f).convert("RGB")} with Pillow 9.4: through
 * OpenCV, with Pillow's conversions where OpenCV's differ ({@code RgbConversion}), and the variants
 * OpenCV cannot decode as Pillow does refused by name by their {@code FormatHeader}
 * (ImageFormatsSuite compares every variant of src/test/resources/formats). EXIF orientation (JPEG
 * APP1, PNG eXIf, WebP EXIF) is applied as {@code ImageOps.exif_transpose}; a TIFF's Orientation
 * tag by its decoder, always, as Pillow applies it when loading a TIFF. Resampling is Pillow's
 * fixed-point {@code ImagingResample} (bilinear, bicubic, box); sizes, crop offsets, padding and
 * RandomResizedCrop's sampling are torchvision 0.14's formulas; float outputs use torch's float32
 * operations. GoldenImageSuite and TorchvisionComparisonSuite check it against Pillow and
 * torchvision. Known differences: CMYK JPEGs (OpenCV's integer CMYK→RGB, within 2 steps) and CMYK
 * TIFFs (within 1), 16-bit gray PNGs (high byte kept; Pillow clips), malformed BMPs and Pillow
 * 9.4's BMP bugs (see {@code BmpHeader}), reduced-size decode (off by default; when switched on,
 * only for JPEGs a resize shrinks at least 2×), and random streams (same algorithm, not torch's
 * generator: "Random operations" below).
 *
 * <h2>Random operations (normative: a reimplementation must draw the same crops and flips)</h2>
 *
 * <p>Each sample has its own random stream: the plan's SplitMix64 ({@code mix}, {@code stream},
 * {@code next} and {@code below} as defined in {@code dev.spindle.spark.plan}'s package
 * documentation, "Random streams"), on stream 3 with the sample's index as the block. Nothing else
 * (thread, time, JDK, CPU) enters it.
 *
 * <pre>
 *   rng = stream(seed, epoch, 3, index)   seed: spark.spindle.image.seed (ImageTransform.withSeed)
 *                                          epoch: the epoch (forEpoch); index: the sample's index
 *                                          in the epoch plan (the batch's index column), >= 0
 *   double():      (next() >>> 11) * 2^-53                       (a multiple of 2^-53 in [0, 1))
 *   uniform(a, b): r = double() * (b - a) + a;  if b > a and r >= b: r = the double below b
 * </pre>
 *
 * The ops of a chain draw in chain order from that one stream; ops not listed draw nothing. {@code
 * rint} rounds to the nearest integer, ties to even; {@code log} and {@code exp} are fdlibm's
 * (Java's {@code StrictMath}), {@code sqrt} IEEE 754's; all in double precision.
 *
 * <ul>
 *   <li>{@code random_resized_crop(…, scale=s0:s1, ratio=r0:r1)} on the {@code W x H} image the ops
 *       before it leave (the decoded image, turned upright when EXIF orientation is honoured,
 *       unless an earlier op cropped, padded or resized it), torchvision 0.14's {@code get_params}:
 *       up to 10 attempts, each
 *       <pre>
 *   area = W * H * uniform(s0, s1);  aspect = exp(uniform(log(r0), log(r1)))
 *   w = rint(sqrt(area * aspect));   h = rint(sqrt(area / aspect))
 *   if 0 &lt; w &lt;= W and 0 &lt; h &lt;= H:  top = below(H - h + 1); left = below(W - w + 1); stop
 *       </pre>
 *       and when no attempt fits, the central crop without a draw: {@code w, h = W, H}; if {@code
 *       W/H < r0}, {@code h = rint(W / r0)}; else if {@code W/H > r1}, {@code w = rint(H * r1)};
 *       {@code top = floor((H - h) / 2)}, {@code left = floor((W - w) / 2)}. The box {@code (top,
 *       left, h, w)} is in that image's coordinates (after an earlier flip, the flipped image's).
 *   <li>{@code hflip(p)}: one draw, whatever {@code p}; the image is mirrored when {@code double()
 *       < p}.
 * </ul>
 *
 * <p>Test vector ({@code RandomOpsReferenceSuite}; {@code src/test/python/random_reference.py}
 * reimplements the above with Python's standard library and draws the same): {@code
 * random_resized_crop(224),hflip} on a 640 x 480 image, epoch 1; first {@code next()} of seed 42,
 * sample 0: {@code 0x4af0cf362cffb6c5}.
 *
 * <pre>
 *   seed  sample   top left    h    w   flip      seed  sample   top left    h    w   flip
 *     0     0      167  282  302  300   no         42     2       45   17  424  377   no
 *     0     1       14   87  418  421   no         42     3       22  237  378  371   yes
 *     0     2       12   88  294  253   yes        -7     0       12  224  374  404   yes
 *     0     3      100  164  351  295   yes        -7     1       19  123  281  219   no
 *    42     0      115   26  310  346   yes        -7     2        5  159  460  378   yes
 *    42     1       19   61  459  527   no         -7     3       69  121  355  385   no
 * </pre>
 */
package dev.spindle.spark.image;
