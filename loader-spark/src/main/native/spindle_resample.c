/*
 * Spindle's native resample: the JNI side of dev.spindle.spark.image.NativeResample.
 *
 * Pillow's separable fixed-point resample (Resample.c: ImagingResampleHorizontal_8bpc, then
 * ImagingResampleVertical_8bpc), restricted to an output window, as PillowResample.java and
 * VectorResample.java do it: each value is HALF + sum(input * coefficient) over its own taps in
 * 32-bit integers, shifted right by 22 and clipped to 0..255, horizontal pass first. The Java side
 * computes the coefficients (the same Kernel objects the Java paths use); this file only sums.
 *
 * Fused band by band with the region decode: the source rows come one at a time, from an open
 * NativeJpeg region (jpeg_read_scanlines into a row buffer) or from an RGB image in memory; each
 * row the vertical pass needs goes through the horizontal pass into a ring of the last few
 * horizontal rows; as soon as an output row's taps are all in the ring, the vertical pass sums
 * them and the output conversion writes the row straight into the batch's memory (uint8 HWC or
 * CHW, or float32/float16 CHW by the Java side's 256-entry per-channel tables, which are torch's
 * values bit for bit).
 *
 * SIMD chosen at run time by the caller (NativeResample.LEVEL): LEVEL_AVX2 and LEVEL_SSE41 use
 * per-function target attributes in this one library; LEVEL_C is plain C. Sums of products are
 * exact in 32-bit modular arithmetic on every level, so every level gives the same bytes. The
 * horizontal SIMD sums split each coefficient k into k >> 15 and k & 0x7FFF, so that 16-bit
 * multiply-adds (pmaddwd) compute the 32-bit products exactly: v * k = (v * (k >> 15) << 15) +
 * v * (k & 0x7FFF), modulo 2^32.
 *
 * Errors: invalid arguments and libjpeg's errors throw ImageException (never a crash); nothing is
 * written outside the destination range the Java side checked. Thread-safe: no global state
 * (buffers are the call's own, malloc'd and freed).
 */
#include <jni.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "spindle_native.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define SPINDLE_X86 1
#endif

#define PRECISION_BITS 22
#define HALF (1 << (PRECISION_BITS - 1))
#define SLACK 64 /* bytes after every row buffer: SIMD loads and stores past a row's end */

/* NativeResample.java's constants */
enum { MODE_UINT8_HWC, MODE_UINT8_CHW, MODE_FLOAT32_CHW, MODE_FLOAT16_CHW };
enum { LEVEL_C, LEVEL_SSE41, LEVEL_AVX2 };

/* One call's resample: kernels, buffers and destination. */
struct plan {
  int w, h;          /* output window */
  int taps;          /* horizontal taps per output column, padded to a multiple of 4 */
  int groups;        /* taps / 4 */
  int32_t *xstart;   /* w: first source pixel of output column x, in the source row buffer */
  int32_t *xk;       /* w * taps coefficients (zero where padded) */
  int16_t *xkv;      /* w * groups * 32: per group, 16 low halves then 16 high halves (SIMD) */
  int32_t *ystart;   /* h: first horizontal row of output row y, relative to the first row read */
  int32_t *ytaps;    /* h */
  int32_t *yk;       /* h * ksize */
  int ksize;
  int rows;          /* source rows read: the window's vertical taps */
  int ring;          /* horizontal rows kept */
  int mode;
  float floats[768]; /* float32 value of channel c, byte v at c * 256 + v */
  uint16_t halves[768];
  uint8_t *dst;
};

static int clip8(uint32_t sum) {
  int32_t v = (int32_t) sum >> PRECISION_BITS;
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* ---- the horizontal pass: one source row into w pixels of 3 clipped bytes ---- */

static void horizontal_c(const struct plan *p, const uint8_t *src, uint8_t *out) {
  const int taps = p->taps;
  for (int x = 0; x < p->w; x++) {
    const uint8_t *s = src + p->xstart[x] * 3;
    const int32_t *k = p->xk + x * taps;
    uint32_t r = HALF, g = HALF, b = HALF;
    for (int t = 0; t < taps; t++, s += 3) {
      uint32_t c = (uint32_t) k[t];
      r += s[0] * c;
      g += s[1] * c;
      b += s[2] * c;
    }
    out[x * 3] = (uint8_t) clip8(r);
    out[x * 3 + 1] = (uint8_t) clip8(g);
    out[x * 3 + 2] = (uint8_t) clip8(b);
  }
}

#ifdef SPINDLE_X86
/*
 * 16 source bytes (4 pixels from s) as 16-bit lanes r0 r1 g0 g1 b0 b1 0 0 (SHUFFLE_A) or r2 r3 g2
 * g3 b2 b3 0 0 (SHUFFLE_B): pmaddwd with coefficients k0 k1 k0 k1 k0 k1 0 0 then gives the
 * channels' sums of two taps in 32-bit lanes r g b 0.
 */
#define SHUFFLE_A 0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1
#define SHUFFLE_B 6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1

__attribute__((target("sse4.1"))) static void horizontal_sse41(const struct plan *p,
    const uint8_t *src, uint8_t *out) {
  const __m128i shuffle_a = _mm_setr_epi8(SHUFFLE_A);
  const __m128i shuffle_b = _mm_setr_epi8(SHUFFLE_B);
  const __m128i half = _mm_set1_epi32(HALF);
  for (int x = 0; x < p->w; x++) {
    const uint8_t *s = src + p->xstart[x] * 3;
    const int16_t *k = p->xkv + (size_t) x * p->groups * 32;
    __m128i lo = _mm_setzero_si128();
    __m128i hi = _mm_setzero_si128();
    for (int g = 0; g < p->groups; g++, s += 12, k += 32) {
      __m128i v = _mm_loadu_si128((const __m128i *) s);
      __m128i a = _mm_shuffle_epi8(v, shuffle_a);
      __m128i b = _mm_shuffle_epi8(v, shuffle_b);
      lo = _mm_add_epi32(lo, _mm_madd_epi16(a, _mm_loadu_si128((const __m128i *) k)));
      lo = _mm_add_epi32(lo, _mm_madd_epi16(b, _mm_loadu_si128((const __m128i *) (k + 8))));
      hi = _mm_add_epi32(hi, _mm_madd_epi16(a, _mm_loadu_si128((const __m128i *) (k + 16))));
      hi = _mm_add_epi32(hi, _mm_madd_epi16(b, _mm_loadu_si128((const __m128i *) (k + 24))));
    }
    __m128i sum = _mm_add_epi32(_mm_add_epi32(_mm_slli_epi32(hi, 15), lo), half);
    sum = _mm_srai_epi32(sum, PRECISION_BITS);
    __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(sum, sum), _mm_setzero_si128());
    /* 4 bytes r g b 0: the 0 is overwritten by the next pixel, or lands in the slack */
    int32_t rgb0 = _mm_cvtsi128_si32(bytes);
    memcpy(out + x * 3, &rgb0, 4);
  }
}

__attribute__((target("avx2"))) static void horizontal_avx2(const struct plan *p,
    const uint8_t *src, uint8_t *out) {
  /* both halves of 4 pixels in one register: taps 0-1 in the low lane, 2-3 in the high one */
  const __m256i shuffle = _mm256_setr_epi8(SHUFFLE_A, SHUFFLE_B);
  const __m128i half = _mm_set1_epi32(HALF);
  for (int x = 0; x < p->w; x++) {
    const uint8_t *s = src + p->xstart[x] * 3;
    const int16_t *k = p->xkv + (size_t) x * p->groups * 32;
    __m256i lo = _mm256_setzero_si256();
    __m256i hi = _mm256_setzero_si256();
    for (int g = 0; g < p->groups; g++, s += 12, k += 32) {
      __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) s));
      __m256i ab = _mm256_shuffle_epi8(v, shuffle);
      lo = _mm256_add_epi32(lo, _mm256_madd_epi16(ab, _mm256_loadu_si256((const __m256i *) k)));
      hi = _mm256_add_epi32(hi,
          _mm256_madd_epi16(ab, _mm256_loadu_si256((const __m256i *) (k + 16))));
    }
    __m256i both = _mm256_add_epi32(_mm256_slli_epi32(hi, 15), lo);
    __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(both), _mm256_extracti128_si256(both, 1));
    sum = _mm_srai_epi32(_mm_add_epi32(sum, half), PRECISION_BITS);
    __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(sum, sum), _mm_setzero_si128());
    int32_t rgb0 = _mm_cvtsi128_si32(bytes);
    memcpy(out + x * 3, &rgb0, 4);
  }
}
#endif

/* ---- the vertical pass: n horizontal rows into one row of `count` clipped bytes ---- */

/* Plain loops along the row: the compiler vectorises them for each target (-O3). */
#define VERTICAL(NAME, ATTR)                                                                    \
  ATTR static void NAME(const uint8_t *const *rows, const int32_t *k, int n, int count,         \
      uint32_t *acc, uint8_t *out) {                                                            \
    if (n == 4) { /* the common downscale, in one pass */                                       \
      const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];                 \
      uint32_t c0 = (uint32_t) k[0], c1 = (uint32_t) k[1], c2 = (uint32_t) k[2],                \
               c3 = (uint32_t) k[3];                                                            \
      for (int i = 0; i < count; i++) {                                                         \
        uint32_t s = HALF + r0[i] * c0 + r1[i] * c1 + r2[i] * c2 + r3[i] * c3;                  \
        int32_t v = (int32_t) s >> PRECISION_BITS;                                              \
        out[i] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);                                     \
      }                                                                                         \
      return;                                                                                   \
    }                                                                                           \
    for (int i = 0; i < count; i++) {                                                           \
      acc[i] = HALF;                                                                            \
    }                                                                                           \
    for (int t = 0; t < n; t++) {                                                               \
      const uint8_t *r = rows[t];                                                               \
      uint32_t c = (uint32_t) k[t];                                                             \
      for (int i = 0; i < count; i++) {                                                         \
        acc[i] += r[i] * c;                                                                     \
      }                                                                                         \
    }                                                                                           \
    for (int i = 0; i < count; i++) {                                                           \
      int32_t v = (int32_t) acc[i] >> PRECISION_BITS;                                           \
      out[i] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);                                       \
    }                                                                                           \
  }

VERTICAL(vertical_c, )
#ifdef SPINDLE_X86
VERTICAL(vertical_sse41, __attribute__((target("sse4.1"))))
VERTICAL(vertical_avx2, __attribute__((target("avx2"))))
#endif

/* ---- the output conversion of one row (w pixels, interleaved) into the destination ---- */

static void write_row(const struct plan *p, const uint8_t *restrict row, int y) {
  const size_t w = (size_t) p->w;
  const size_t plane = w * (size_t) p->h;
  const size_t at = (size_t) y * w; /* the row's first value in each channel's plane */
  /* typed, restrict-qualified locals: stores through uint8_t would alias the plan and the tables,
   * and reload them every value (measured: 3x slower); NativeResample.canWrite checked that the
   * destination is aligned to its value size */
  switch (p->mode) {
    case MODE_UINT8_HWC:
      memcpy(p->dst + at * 3, row, w * 3);
      break;
    case MODE_UINT8_CHW: {
      uint8_t *restrict r = p->dst + at;
      uint8_t *restrict g = r + plane;
      uint8_t *restrict b = g + plane;
      for (size_t x = 0; x < w; x++) {
        r[x] = row[x * 3];
        g[x] = row[x * 3 + 1];
        b[x] = row[x * 3 + 2];
      }
      break;
    }
    case MODE_FLOAT32_CHW: {
      const float *restrict tr = p->floats;
      const float *restrict tg = tr + 256;
      const float *restrict tb = tg + 256;
      float *restrict r = (float *) (void *) p->dst + at; /* little-endian, as Arrow's buffers */
      float *restrict g = r + plane;
      float *restrict b = g + plane;
      for (size_t x = 0; x < w; x++) {
        r[x] = tr[row[x * 3]];
        g[x] = tg[row[x * 3 + 1]];
        b[x] = tb[row[x * 3 + 2]];
      }
      break;
    }
    default: {
      const uint16_t *restrict tr = p->halves;
      const uint16_t *restrict tg = tr + 256;
      const uint16_t *restrict tb = tg + 256;
      uint16_t *restrict r = (uint16_t *) (void *) p->dst + at;
      uint16_t *restrict g = r + plane;
      uint16_t *restrict b = g + plane;
      for (size_t x = 0; x < w; x++) {
        r[x] = tr[row[x * 3]];
        g[x] = tg[row[x * 3 + 1]];
        b[x] = tb[row[x * 3 + 2]];
      }
      break;
    }
  }
}

/* ---- one call ---- */

typedef void (*horizontal_fn)(const struct plan *, const uint8_t *, uint8_t *);
typedef void (*vertical_fn)(const uint8_t *const *, const int32_t *, int, int, uint32_t *,
    uint8_t *);

/* Where the source rows come from: a decoder, or memory. */
struct source {
  struct decoder *decoder; /* NULL: memory */
  const uint8_t *memory;   /* row 0 of the rows in memory */
  size_t stride;           /* bytes per source row */
  int skip;                /* decoder: rows to read and drop before the first row used */
};

/* Frees what setup() allocated (NULL-safe). */
static void release(struct plan *p, uint8_t *buffers) {
  free(p->xstart);
  free(p->xk);
  free(p->xkv);
  free(p->ystart);
  free(p->ytaps);
  free(p->yk);
  free(buffers);
}

/*
 * Runs the plan over the source: for each output row, the horizontal rows it needs (read and
 * resampled in order into the ring), then the vertical pass and the row's conversion. Returns 0,
 * or -1 after libjpeg's error_exit longjmp'd here (the message is in the decoder).
 */
static int run(struct plan *p, struct source *src, uint8_t *rowbuf, uint8_t *ring, size_t ringrow,
    uint8_t *outrow, uint32_t *acc, const uint8_t **taprows, horizontal_fn horizontal,
    vertical_fn vertical) {
  struct decoder *d = src->decoder;
  if (d != NULL && setjmp(d->err.escape)) {
    return -1;
  }
  /* volatile: changed after setjmp (their values are not used after a longjmp, but gcc's
   * -Wclobbered, an error here, cannot tell) */
  volatile int produced = 0;
  volatile int skip = src->skip;
  for (int y = 0; y < p->h; y++) {
    int first = p->ystart[y];
    int n = p->ytaps[y];
    while (produced < first + n) {
      const uint8_t *row;
      if (d != NULL) {
        JSAMPROW line = rowbuf;
        do { /* the rows above the first one used are read and dropped */
          if (jpeg_read_scanlines(&d->cinfo, &line, 1) != 1) {
            snprintf(d->err.message, JMSG_LENGTH_MAX,
                "the decoder stopped before the region's end");
            return -1;
          }
          d->row++;
        } while (skip-- > 0);
        skip = 0;
        row = rowbuf;
      } else {
        /* copied first: the SIMD loads read a few bytes past the span, never past the buffer */
        memcpy(rowbuf, src->memory + (size_t) produced * src->stride, src->stride);
        row = rowbuf;
      }
      horizontal(p, row, ring + (size_t) (produced % p->ring) * ringrow);
      produced++;
    }
    for (int t = 0; t < n; t++) {
      taprows[t] = ring + (size_t) ((first + t) % p->ring) * ringrow;
    }
    vertical(taprows, p->yk + (size_t) y * p->ksize, n, p->w * 3, acc, outrow);
    write_row(p, outrow, y);
  }
  return 0;
}

/*
 * Copies and checks the kernels, pads the horizontal one to a multiple of 4 taps and lays it out
 * for the SIMD sums. Returns NULL, or why the arguments are invalid.
 */
static const char *setup(JNIEnv *env, struct plan *p, int row_pixels, jintArray xstart,
    jintArray xk, int taps, jintArray ystart, jintArray ytaps, jintArray yk) {
  int w = p->w;
  int h = p->h;
  if (w <= 0 || h <= 0 || taps <= 0 || p->ksize <= 0 || p->rows <= 0
      || (*env)->GetArrayLength(env, xstart) != w
      || (*env)->GetArrayLength(env, xk) != (jsize) ((int64_t) w * taps)
      || (*env)->GetArrayLength(env, ystart) != h || (*env)->GetArrayLength(env, ytaps) != h
      || (*env)->GetArrayLength(env, yk) != (jsize) ((int64_t) h * p->ksize)) {
    return "kernel sizes do not match the window";
  }
  p->groups = (taps + 3) / 4;
  p->taps = p->groups * 4;
  p->xstart = malloc(sizeof(int32_t) * (size_t) w);
  p->xk = calloc((size_t) w * (size_t) p->taps, sizeof(int32_t));
  p->xkv = calloc((size_t) w * (size_t) p->groups * 32, sizeof(int16_t));
  p->ystart = malloc(sizeof(int32_t) * (size_t) h);
  p->ytaps = malloc(sizeof(int32_t) * (size_t) h);
  p->yk = malloc(sizeof(int32_t) * (size_t) h * (size_t) p->ksize);
  int32_t *given = malloc(sizeof(int32_t) * (size_t) w * (size_t) taps);
  if (!p->xstart || !p->xk || !p->xkv || !p->ystart || !p->ytaps || !p->yk || !given) {
    free(given);
    return "out of memory";
  }
  (*env)->GetIntArrayRegion(env, xstart, 0, w, p->xstart);
  (*env)->GetIntArrayRegion(env, xk, 0, w * taps, given);
  (*env)->GetIntArrayRegion(env, ystart, 0, h, p->ystart);
  (*env)->GetIntArrayRegion(env, ytaps, 0, h, p->ytaps);
  (*env)->GetIntArrayRegion(env, yk, 0, h * p->ksize, p->yk);
  for (int x = 0; x < w; x++) {
    if (p->xstart[x] < 0 || p->xstart[x] + taps > row_pixels) {
      free(given);
      return "a horizontal tap lies outside the source row";
    }
    for (int t = 0; t < taps; t++) {
      int32_t k = given[x * taps + t];
      p->xk[x * p->taps + t] = k;
      /* group g's 32 halves: low halves of taps 4g, 4g+1 (x3 channels, 2 zero), of 4g+2, 4g+3,
       * then the high halves likewise */
      int16_t *v = p->xkv + ((size_t) x * p->groups + t / 4) * 32;
      int16_t low = (int16_t) (k & 0x7FFF);
      int16_t high = (int16_t) (k >> 15);
      int lane = (t % 4) / 2 * 8 + t % 2;
      for (int c = 0; c < 3; c++) {
        v[lane + 2 * c] = low;
        v[16 + lane + 2 * c] = high;
      }
    }
  }
  free(given);
  int most = 1;
  for (int y = 0; y < h; y++) {
    if (p->ystart[y] < 0 || p->ytaps[y] < 0 || p->ytaps[y] > p->ksize
        || p->ystart[y] + p->ytaps[y] > p->rows) {
      return "a vertical tap lies outside the rows read";
    }
    if (y > 0 && (p->ystart[y] < p->ystart[y - 1]
        || p->ystart[y] + p->ytaps[y] < p->ystart[y - 1] + p->ytaps[y - 1])) {
      most = p->rows; /* windows not in order (never for Pillow's kernels): keep every row */
    }
    most = p->ytaps[y] > most ? p->ytaps[y] : most;
  }
  p->ring = most;
  return NULL;
}

/*
 * Resamples rows [y0, y0 + rows) of a source into a w x h window at `dst` (an address the Java
 * side checked holds the output's bytes) in `mode`, on SIMD `level`. The source: the open region
 * `decoder` (read in order from its next row, the rows before y0 dropped),
 * or, when decoder is 0, `memory` (a direct buffer: `rows` rows of `stride` bytes from row y0).
 * Horizontal kernel: output x sums `taps` pixels from xstart[x] (in the source row) weighted by
 * xk[x * taps ...]; vertical: output y sums ytaps[y] rows from ystart[y] (relative to y0) weighted
 * by yk[y * ksize ...]. Returns libjpeg's warnings (0 for memory), or -1 after throwing.
 */
JNIEXPORT jint JNICALL Java_dev_spindle_spark_image_NativeResample_resample(JNIEnv *env,
    jclass cls, jlong decoder, jobject memory, jint stride, jint y0, jint rows, jintArray xstart,
    jintArray xk, jint taps, jint w, jintArray ystart, jintArray ytaps, jintArray yk, jint ksize,
    jint h, jint mode, jfloatArray floats, jshortArray halves, jlong dst, jlong dstBytes,
    jint level) {
  (void) cls;
  struct plan p;
  memset(&p, 0, sizeof p);
  p.w = w;
  p.h = h;
  p.ksize = ksize;
  p.rows = rows;
  p.mode = mode;
  p.dst = (uint8_t *) (intptr_t) dst;
  struct source src;
  memset(&src, 0, sizeof src);
  src.stride = (size_t) stride;
  int64_t out_bytes = (int64_t) w * h * 3
      * (mode == MODE_FLOAT32_CHW ? 4 : mode == MODE_FLOAT16_CHW ? 2 : 1);
  const char *why = NULL;
  if (mode < MODE_UINT8_HWC || mode > MODE_FLOAT16_CHW || dst == 0 || out_bytes > dstBytes
      || stride <= 0 || stride % 3 != 0 || y0 < 0) {
    why = "invalid mode, destination or source";
  } else if (level < LEVEL_C || level > LEVEL_AVX2
#ifndef SPINDLE_X86
      || level != LEVEL_C
#endif
  ) {
    why = "SIMD level not built for this machine";
  } else if (decoder != 0) {
    src.decoder = (struct decoder *) (intptr_t) decoder;
    if (stride != src.decoder->width * 3 || y0 < src.decoder->row
        || y0 + rows > src.decoder->end) {
      why = "the rows asked for are not the open region's";
    }
    src.skip = y0 - src.decoder->row;
  } else {
    src.memory = (*env)->GetDirectBufferAddress(env, memory);
    jlong capacity = (*env)->GetDirectBufferCapacity(env, memory);
    if (src.memory == NULL || (int64_t) rows * stride > capacity) {
      why = "the source buffer is not direct or holds fewer rows";
    }
  }
  if (why == NULL) {
    why = setup(env, &p, stride / 3, xstart, xk, taps, ystart, ytaps, yk);
  }
  if (why == NULL && mode == MODE_FLOAT32_CHW) {
    if (floats == NULL || (*env)->GetArrayLength(env, floats) != 768) {
      why = "float table missing";
    } else {
      (*env)->GetFloatArrayRegion(env, floats, 0, 768, p.floats);
    }
  }
  if (why == NULL && mode == MODE_FLOAT16_CHW) {
    if (halves == NULL || (*env)->GetArrayLength(env, halves) != 768) {
      why = "float16 table missing";
    } else {
      (*env)->GetShortArrayRegion(env, halves, 0, 768, (jshort *) p.halves);
    }
  }
  /* one allocation: row buffer, ring, output row, accumulators, tap row pointers */
  size_t rowbytes = (size_t) stride + SLACK;
  size_t ringrow = ((size_t) w * 3 + SLACK + 63) & ~(size_t) 63;
  uint8_t *buffers = NULL;
  if (why == NULL) {
    size_t total = rowbytes + ringrow * (size_t) p.ring + ringrow
        + sizeof(uint32_t) * (size_t) w * 3 + sizeof(uint8_t *) * (size_t) ksize + 128;
    buffers = calloc(1, total);
    if (buffers == NULL) {
      why = "out of memory";
    }
  }
  if (why != NULL) {
    release(&p, buffers);
    char message[160];
    snprintf(message, sizeof message, "Native resample: %s", why);
    throw_image_exception(env, message);
    return -1;
  }
  uint8_t *rowbuf = buffers;
  uint8_t *ring = rowbuf + rowbytes;
  uint8_t *outrow = ring + ringrow * (size_t) p.ring;
  uint32_t *acc = (uint32_t *) (((uintptr_t) (outrow + ringrow) + 15) & ~(uintptr_t) 15);
  const uint8_t **taprows =
      (const uint8_t **) (((uintptr_t) (acc + (size_t) w * 3) + 15) & ~(uintptr_t) 15);
  horizontal_fn horizontal = horizontal_c;
  vertical_fn vertical = vertical_c;
#ifdef SPINDLE_X86
  if (level == LEVEL_AVX2) {
    horizontal = horizontal_avx2;
    vertical = vertical_avx2;
  } else if (level == LEVEL_SSE41) {
    horizontal = horizontal_sse41;
    vertical = vertical_sse41;
  }
#endif
  int failed = run(&p, &src, rowbuf, ring, ringrow, outrow, acc, taprows, horizontal, vertical);
  release(&p, buffers);
  if (failed) {
    throw_error(env, src.decoder);
    return -1;
  }
  return src.decoder != NULL ? (jint) src.decoder->err.pub.num_warnings : 0;
}

/* The best SIMD level this CPU runs: LEVEL_AVX2, LEVEL_SSE41 or LEVEL_C. */
JNIEXPORT jint JNICALL Java_dev_spindle_spark_image_NativeResample_bestLevel(JNIEnv *env,
    jclass cls) {
  (void) env;
  (void) cls;
#ifdef SPINDLE_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    return LEVEL_AVX2;
  }
  if (__builtin_cpu_supports("sse4.1")) {
    return LEVEL_SSE41;
  }
#endif
  return LEVEL_C;
}
