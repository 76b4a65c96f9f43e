/*
 * Spindle's native resample: the JNI side of dev.spindle.spark.image.NativeResample.
 *
 * Pillow's separable fixed-point resample (Resample.c: ImagingResampleHorizontal_8bpc, then
 * ImagingResampleVertical_8bpc), restricted to an output window, as PillowResample.java and
 * VectorResample.java do it: each value is HALF + sum(input * coefficient) over its own taps in
 * 32-bit integers, shifted right by 22 and clipped to 0..255, horizontal pass first. The Java side
 * computes the coefficients (the same Kernel objects the Java paths use); this file only sums.
 *
 * Fused band by band with the region decode (at SSE4.1 and C; AVX2 takes 8 rows at a time, see
 * run_blocks): the source rows come one at a time, from an open NativeJpeg region
 * (jpeg_read_scanlines into a row buffer) or from an RGB image in memory; each
 * row the vertical pass needs goes through the horizontal pass into a ring of the last few
 * horizontal rows; as soon as an output row's taps are all in the ring, the vertical pass sums
 * them and the output conversion writes the row straight into the batch's memory (uint8 HWC or
 * CHW, or float32/float16 CHW by the Java side's 256-entry per-channel tables, which are torch's
 * values bit for bit).
 *
 * SIMD chosen at run time by the caller (NativeResample.LEVEL): LEVEL_AVX2 and LEVEL_SSE41 use
 * per-function target attributes in this one library; LEVEL_C is plain C. Sums of products are
 * exact in 32-bit modular arithmetic on every level, so every level gives the same bytes.
 * LEVEL_AVX2 (with FMA) runs both passes 8 rows or columns at a time (run_blocks, below); SSE4.1
 * and C go a pixel at a time through the ring above, the SSE4.1 horizontal sums splitting each
 * coefficient k into k >> 15 and k & 0x7FFF, so that 16-bit multiply-adds (pmaddwd) compute the
 * 32-bit products exactly: v * k = (v * (k >> 15) << 15) + v * (k & 0x7FFF), modulo 2^32.
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

#ifdef SPINDLE_X86
/*
 * ---- LEVEL_AVX2: both passes on 8 rows or 8 columns at a time ----
 *
 * The horizontal pass takes the source 8 rows at a time and transposes their bytes (`wide`: byte j
 * of the span the kernel reads, row r of the block, at wide[j * 8 + r]), so that one vector holds
 * one (column, channel) of 8 rows and every output column is a few multiply-adds of such vectors
 * by a broadcast coefficient, with the kernel trimmed to the taps that are not zero (a bilinear
 * upscale has 2 or 3). The results (8 rows of one column) are transposed back, 8 columns at a
 * time, into `planar`: channel c, group g of 8 columns, row r at
 * ((c * groups + g) * prows + r) * 8. The vertical pass then sums 8 columns at a time from
 * `planar` and converts them in vectors: float32 by torch's arithmetic (checked against the Java
 * side's table for all 256 values of each channel; a channel that differs reads the table); the
 * other modes leave a planar row that write_planar_row writes (uint8 HWC interleaved by byte
 * shuffles, uint8 CHW copied, float16 by the Java side's table). The same sums as the other
 * levels, so the same bytes.
 */

/* How a channel's float32 values are computed: fused multiply-adds, divisions, or the table. */
enum { NORM_FMA, NORM_DIV, NORM_TABLE };

struct blocks {
  int first;        /* first source pixel any output reads, in the source row buffer */
  int span;         /* bytes of each source row read: (end - first) * 3 */
  int chunks;       /* 32-byte chunks of the span transposed per block */
  int taps;         /* taps per output column, zero ones trimmed */
  int groups;       /* (w + 7) / 8 */
  int prows;        /* rows read, rounded up to 8 */
  int32_t *at;      /* per column (groups * 8): byte offset of its first tap in `wide` */
  int32_t *k;       /* groups * 8 * taps coefficients */
  uint8_t *wide;    /* a block transposed */
  uint8_t *cols;    /* a block's horizontal results: channel c, column x, its 8 rows at
                     * (c * groups * 8 + x) * 8 */
  uint8_t *planar;  /* the vertical pass's input */
  uint8_t *row;     /* one output row, channel c at c * groups * 8 (for write_planar_row) */
  int norm[3];      /* NORM_* per channel */
  float mean[3], std[3], inverse[3];
  int normalize;
  int8_t hwc[3][3][16]; /* uint8 HWC: byte shuffles of 16 pixels' channel c to output bytes 16k.. */
};

/* b->hwc: output byte i of 16 interleaved pixels (r g b r g b ...) is pixel i / 3's channel i % 3,
 * so that bytes 16k .. 16k + 15 are the OR of three shuffles, one per channel (-1: zero). */
static void hwc_shuffles(struct blocks *b) {
  for (int k = 0; k < 3; k++) {
    for (int c = 0; c < 3; c++) {
      for (int j = 0; j < 16; j++) {
        int i = 16 * k + j;
        b->hwc[k][c][j] = (int8_t) (i % 3 == c ? i / 3 : -1);
      }
    }
  }
}

/* 8 ints as the bytes Pillow stores: shifted down, clipped (saturating packs clip exactly). */
__attribute__((target("avx2"))) static inline __m128i narrow8(__m256i sum) {
  __m256i v = _mm256_srai_epi32(sum, PRECISION_BITS);
  __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return _mm_packus_epi16(words, words);
}

/* The taps of 8 rows (or columns) at p, p + step, ... weighted by the broadcast k[0 ..], from
 * HALF. */
__attribute__((target("avx2"))) static inline __m256i sum8(const uint8_t *p, size_t step,
    const __m256i *k, int n) {
  __m256i acc = _mm256_set1_epi32(HALF);
  for (int t = 0; t < n; t++) {
    __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (p + (size_t) t * step)));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(v, k[t]));
  }
  return acc;
}

/* The most taps whose coefficients the loops keep broadcast in locals (so that stores through
 * vector types, which may alias anything, do not make the compiler reload them); more taps (a
 * large downscale) are broadcast from memory in sum8_k. */
#define LOCAL_TAPS 6

/* k[0 .. n) broadcast into kv, n <= LOCAL_TAPS. */
__attribute__((target("avx2"))) static inline void broadcast(const int32_t *k, int n,
    __m256i *kv) {
  for (int t = 0; t < n; t++) {
    kv[t] = _mm256_set1_epi32(k[t]);
  }
}

/* sum8 with the coefficients read from k[0 .. n). */
__attribute__((target("avx2"))) static inline __m256i sum8_k(const uint8_t *p, size_t step,
    const int32_t *k, int n) {
  __m256i acc = _mm256_set1_epi32(HALF);
  for (int t = 0; t < n; t++) {
    __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (p + (size_t) t * step)));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(v, _mm256_set1_epi32(k[t])));
  }
  return acc;
}

/* Transposes a block's span: 32 bytes of 8 rows at a time, into wide. */
__attribute__((target("avx2"))) static void transpose_block(const struct blocks *b,
    uint8_t *const *rows, uint8_t *wide) {
  for (int j = 0; j < b->chunks; j++) {
    __m256i a[8];
    for (int r = 0; r < 8; r++) {
      a[r] = _mm256_loadu_si256((const __m256i *) (rows[r] + (size_t) j * 32));
    }
    /* within each 128-bit lane (bytes 0-15 and 16-31 of the chunk): rows interleaved in pairs,
     * then fours, then eights: d[i] holds bytes 2i and 2i + 1 of its lane, 8 rows each */
    __m256i b0 = _mm256_unpacklo_epi8(a[0], a[1]), b1 = _mm256_unpackhi_epi8(a[0], a[1]);
    __m256i b2 = _mm256_unpacklo_epi8(a[2], a[3]), b3 = _mm256_unpackhi_epi8(a[2], a[3]);
    __m256i b4 = _mm256_unpacklo_epi8(a[4], a[5]), b5 = _mm256_unpackhi_epi8(a[4], a[5]);
    __m256i b6 = _mm256_unpacklo_epi8(a[6], a[7]), b7 = _mm256_unpackhi_epi8(a[6], a[7]);
    __m256i c0 = _mm256_unpacklo_epi16(b0, b2), c1 = _mm256_unpackhi_epi16(b0, b2);
    __m256i c2 = _mm256_unpacklo_epi16(b1, b3), c3 = _mm256_unpackhi_epi16(b1, b3);
    __m256i c4 = _mm256_unpacklo_epi16(b4, b6), c5 = _mm256_unpackhi_epi16(b4, b6);
    __m256i c6 = _mm256_unpacklo_epi16(b5, b7), c7 = _mm256_unpackhi_epi16(b5, b7);
    __m256i d[8] = {
      _mm256_unpacklo_epi32(c0, c4), _mm256_unpackhi_epi32(c0, c4),
      _mm256_unpacklo_epi32(c1, c5), _mm256_unpackhi_epi32(c1, c5),
      _mm256_unpacklo_epi32(c2, c6), _mm256_unpackhi_epi32(c2, c6),
      _mm256_unpacklo_epi32(c3, c7), _mm256_unpackhi_epi32(c3, c7),
    };
    uint8_t *out = wide + (size_t) j * 256;
    for (int i = 0; i < 8; i += 2) { /* low lanes: bytes 0-15; high lanes: bytes 16-31 */
      _mm256_storeu_si256((__m256i *) (out + i * 16),
          _mm256_permute2x128_si256(d[i], d[i + 1], 0x20));
      _mm256_storeu_si256((__m256i *) (out + 128 + i * 16),
          _mm256_permute2x128_si256(d[i], d[i + 1], 0x31));
    }
  }
}

/* The horizontal sums of one block, n taps per column (a constant where inlined). */
__attribute__((target("avx2"))) static inline void columns_n(const struct blocks *b,
    const uint8_t *wide, uint8_t *cols, int n) {
  const int width = b->groups * 8;
  const int32_t *at = b->at;
  __m256i kv[LOCAL_TAPS];
  for (int x = 0; x < width; x++) {
    const uint8_t *p = wide + at[x];
    const int32_t *k = b->k + (size_t) x * (size_t) n;
    uint8_t *out = cols + (size_t) x * 8;
    if (n <= LOCAL_TAPS) {
      broadcast(k, n, kv);
    }
    for (int c = 0; c < 3; c++) {
      __m256i sum = n <= LOCAL_TAPS ? sum8(p + c * 8, 24, kv, n) : sum8_k(p + c * 8, 24, k, n);
      _mm_storel_epi64((__m128i *) (out + (size_t) c * width * 8), narrow8(sum));
    }
  }
}

__attribute__((target("avx2"))) static void columns(const struct blocks *b, const uint8_t *wide,
    uint8_t *cols) {
  switch (b->taps) {
    case 1: columns_n(b, wide, cols, 1); break;
    case 2: columns_n(b, wide, cols, 2); break;
    case 3: columns_n(b, wide, cols, 3); break;
    case 4: columns_n(b, wide, cols, 4); break;
    case 5: columns_n(b, wide, cols, 5); break;
    case 6: columns_n(b, wide, cols, 6); break;
    default: columns_n(b, wide, cols, b->taps); break;
  }
}

/* cols (8 rows of each column) into planar rows [r0, r0 + 8): 8x8 byte tiles transposed. */
__attribute__((target("avx2"))) static void untranspose(const struct blocks *b,
    const uint8_t *cols, uint8_t *planar, int r0) {
  /* bytes 0-7 (one column) and 8-15 (the next) of a 16-byte load, interleaved */
  const __m128i pairs = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  for (int c = 0; c < 3; c++) {
    for (int g = 0; g < b->groups; g++) {
      const uint8_t *in = cols + ((size_t) c * b->groups + g) * 64;
      __m128i t0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) in), pairs);
      __m128i t1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (in + 16)), pairs);
      __m128i t2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (in + 32)), pairs);
      __m128i t3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (in + 48)), pairs);
      __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
      __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
      uint8_t *out = planar + (((size_t) c * b->groups + g) * (size_t) b->prows + r0) * 8;
      _mm_storeu_si128((__m128i *) out, _mm_unpacklo_epi32(u0, u2));
      _mm_storeu_si128((__m128i *) (out + 16), _mm_unpackhi_epi32(u0, u2));
      _mm_storeu_si128((__m128i *) (out + 32), _mm_unpacklo_epi32(u1, u3));
      _mm_storeu_si128((__m128i *) (out + 48), _mm_unpackhi_epi32(u1, u3));
    }
  }
}

/* A channel's float32 arithmetic as vectors: its NORM_* and constants. */
struct norm8 {
  int mode;
  int normalize;
  __m256 mean, std, inverse, r255, d255;
};

__attribute__((target("avx2"))) static inline struct norm8 norm8(const struct blocks *b, int c) {
  struct norm8 n = {
    b->norm[c], b->normalize, _mm256_set1_ps(b->mean[c]), _mm256_set1_ps(b->std[c]),
    _mm256_set1_ps(b->inverse[c]), _mm256_set1_ps(1.0f / 255.0f), _mm256_set1_ps(255.0f),
  };
  return n;
}

/* The float32 values of 8 bytes v (0..255 as ints), as the table holds them. */
__attribute__((target("avx2,fma"))) static inline __m256 to_float(const struct norm8 *n,
    __m256i v) {
  __m256 f = _mm256_cvtepi32_ps(v);
  if (n->mode == NORM_FMA) {
    /* a / d as OutputWriter.divide: q = a * (1 / d), then q + (a - q * d) * (1 / d) */
    __m256 q = _mm256_mul_ps(f, n->r255);
    f = _mm256_fmadd_ps(_mm256_fnmadd_ps(q, n->d255, f), n->r255, q);
    if (n->normalize) {
      __m256 a = _mm256_sub_ps(f, n->mean);
      q = _mm256_mul_ps(a, n->inverse);
      f = _mm256_fmadd_ps(_mm256_fnmadd_ps(q, n->std, a), n->inverse, q);
    }
  } else {
    f = _mm256_div_ps(f, n->d255);
    if (n->normalize) {
      f = _mm256_div_ps(_mm256_sub_ps(f, n->mean), n->std);
    }
  }
  return f;
}

/* For each channel: NORM_FMA when that arithmetic gives the table's 256 values bit for bit, else
 * NORM_DIV when divisions do (as the table was computed), else NORM_TABLE. */
__attribute__((target("avx2,fma"))) static void choose_norm(struct blocks *b,
    const float *table) {
  for (int c = 0; c < 3; c++) {
    int mode;
    for (mode = NORM_FMA; mode < NORM_TABLE; mode++) {
      b->norm[c] = mode;
      struct norm8 n = norm8(b, c);
      int same = 1;
      for (int v = 0; v < 256 && same; v += 8) {
        float got[8];
        _mm256_storeu_ps(got, to_float(&n, _mm256_add_epi32(_mm256_set1_epi32(v),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))));
        same = memcmp(got, table + c * 256 + v, sizeof got) == 0;
      }
      if (same) {
        break;
      }
    }
    b->norm[c] = mode;
  }
}

/* Output row y: n vertical taps from planar row `first`, for each channel and group of 8. */
__attribute__((target("avx2,fma"))) static inline void output_row_n(const struct plan *p,
    const struct blocks *b, int y, int first, const int32_t *k, int n) {
  const int w = p->w;
  const int groups = b->groups;
  const size_t plane = (size_t) w * (size_t) p->h;
  const size_t gstep = (size_t) b->prows * 8; /* from a group's row to the next group's */
  const int whole = w / 8;                      /* groups written without a tail */
  __m256i kv[LOCAL_TAPS];
  if (n <= LOCAL_TAPS) {
    broadcast(k, n, kv);
  }
  const __m256i zero = _mm256_setzero_si256();
  const __m256i top = _mm256_set1_epi32(255);
  for (int c = 0; c < 3; c++) {
    const uint8_t *in = b->planar + ((size_t) c * groups * (size_t) b->prows + first) * 8;
    if (p->mode == MODE_FLOAT32_CHW && b->norm[c] != NORM_TABLE) {
      const struct norm8 norm = norm8(b, c);
      float *out = (float *) (void *) p->dst + c * plane + (size_t) y * w;
      for (int g = 0; g < groups; g++, in += gstep, out += 8) {
        __m256i sum = n <= LOCAL_TAPS ? sum8(in, 8, kv, n) : sum8_k(in, 8, k, n);
        __m256i v = _mm256_srai_epi32(sum, PRECISION_BITS);
        __m256 f = to_float(&norm, _mm256_min_epi32(_mm256_max_epi32(v, zero), top));
        if (g < whole) {
          _mm256_storeu_ps(out, f);
        } else {
          float tail[8];
          _mm256_storeu_ps(tail, f);
          memcpy(out, tail, sizeof(float) * (size_t) (w - g * 8));
        }
      }
    } else {
      uint8_t *out = b->row + (size_t) c * groups * 8;
      for (int g = 0; g < groups; g++, in += gstep, out += 8) {
        __m256i sum = n <= LOCAL_TAPS ? sum8(in, 8, kv, n) : sum8_k(in, 8, k, n);
        _mm_storel_epi64((__m128i *) out, narrow8(sum));
      }
    }
  }
}

/* The modes (or channels) output_row_n leaves in b->row: written from there. */
__attribute__((target("avx2"))) static void write_planar_row(const struct plan *p,
    const struct blocks *b, int y) {
  const size_t w = (size_t) p->w;
  const size_t plane = w * (size_t) p->h;
  const size_t cw = (size_t) b->groups * 8;
  if (p->mode == MODE_UINT8_HWC) { /* 16 pixels at a time by three shuffles per 16 bytes */
    const uint8_t *red = b->row;
    const uint8_t *green = red + cw;
    const uint8_t *blue = green + cw;
    uint8_t *out = p->dst + (size_t) y * w * 3;
    __m128i m[3][3];
    for (int k = 0; k < 3; k++) {
      for (int c = 0; c < 3; c++) {
        m[k][c] = _mm_loadu_si128((const __m128i *) b->hwc[k][c]);
      }
    }
    size_t x = 0;
    for (; x + 16 <= w; x += 16) {
      __m128i r = _mm_loadu_si128((const __m128i *) (red + x));
      __m128i g = _mm_loadu_si128((const __m128i *) (green + x));
      __m128i bl = _mm_loadu_si128((const __m128i *) (blue + x));
      for (int k = 0; k < 3; k++) {
        __m128i v = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, m[k][0]),
            _mm_shuffle_epi8(g, m[k][1])), _mm_shuffle_epi8(bl, m[k][2]));
        _mm_storeu_si128((__m128i *) (out + x * 3 + (size_t) k * 16), v);
      }
    }
    for (; x < w; x++) {
      out[x * 3] = red[x];
      out[x * 3 + 1] = green[x];
      out[x * 3 + 2] = blue[x];
    }
    return;
  }
  if (p->mode == MODE_UINT8_CHW) {
    for (int c = 0; c < 3; c++) {
      memcpy(p->dst + c * plane + (size_t) y * w, b->row + c * cw, w);
    }
    return;
  }
  if (p->mode == MODE_FLOAT32_CHW) { /* only channels that read the table */
    for (int c = 0; c < 3; c++) {
      if (b->norm[c] == NORM_TABLE) {
        const float *restrict t = p->floats + c * 256;
        const uint8_t *restrict in = b->row + c * cw;
        float *restrict out = (float *) (void *) p->dst + c * plane + (size_t) y * w;
        for (size_t x = 0; x < w; x++) {
          out[x] = t[in[x]];
        }
      }
    }
    return;
  }
  for (int c = 0; c < 3; c++) { /* MODE_FLOAT16_CHW */
    const uint16_t *restrict t = p->halves + c * 256;
    const uint8_t *restrict in = b->row + c * cw;
    uint16_t *restrict out = (uint16_t *) (void *) p->dst + c * plane + (size_t) y * w;
    for (size_t x = 0; x < w; x++) {
      out[x] = t[in[x]];
    }
  }
}

__attribute__((target("avx2,fma"))) static void output_row(const struct plan *p,
    const struct blocks *b, int y) {
  const int32_t *k = p->yk + (size_t) y * (size_t) p->ksize;
  int first = p->ystart[y];
  switch (p->ytaps[y]) {
    case 1: output_row_n(p, b, y, first, k, 1); break;
    case 2: output_row_n(p, b, y, first, k, 2); break;
    case 3: output_row_n(p, b, y, first, k, 3); break;
    case 4: output_row_n(p, b, y, first, k, 4); break;
    case 5: output_row_n(p, b, y, first, k, 5); break;
    case 6: output_row_n(p, b, y, first, k, 6); break;
    default: output_row_n(p, b, y, first, k, p->ytaps[y]); break;
  }
  if (p->mode != MODE_FLOAT32_CHW || b->norm[0] == NORM_TABLE || b->norm[1] == NORM_TABLE
      || b->norm[2] == NORM_TABLE) {
    write_planar_row(p, b, y);
  }
}

/* The taps [*lo, *hi) of the n coefficients k that are not zero at either end (empty: lo == hi). */
static void nonzero_taps(const int32_t *k, int n, int *lo, int *hi) {
  int a = 0, b = n;
  while (a < b && k[a] == 0) {
    a++;
  }
  while (b > a && k[b - 1] == 0) {
    b--;
  }
  *lo = a;
  *hi = b;
}

/*
 * The horizontal kernel with its zero taps trimmed: b->taps taps per column (the most any column
 * has), windows kept inside the row of row_pixels, columns past w zero. Returns 0, or -1 when out
 * of memory.
 */
static int trim(const struct plan *p, struct blocks *b, int row_pixels) {
  const int width = b->groups * 8;
  int most = 1;
  for (int x = 0; x < p->w; x++) {
    const int32_t *k = p->xk + (size_t) x * p->taps;
    int lo, hi;
    nonzero_taps(k, p->taps, &lo, &hi);
    most = hi - lo > most ? hi - lo : most;
  }
  b->taps = most;
  b->at = malloc(sizeof(int32_t) * (size_t) width);
  b->k = calloc((size_t) width * (size_t) most, sizeof(int32_t));
  if (b->at == NULL || b->k == NULL) {
    return -1;
  }
  int first = row_pixels, end = 0;
  for (int x = 0; x < p->w; x++) {
    const int32_t *k = p->xk + (size_t) x * p->taps;
    int lo, hi;
    nonzero_taps(k, p->taps, &lo, &hi);
    int s = p->xstart[x] + lo;
    int from = s < row_pixels - most ? s : row_pixels - most; /* setup() checked most fit */
    for (int t = lo; t < hi; t++) {
      b->k[(size_t) x * most + (s - from) + (t - lo)] = k[t];
    }
    b->at[x] = from; /* made relative to `first` below */
    first = from < first ? from : first;
    end = from + most > end ? from + most : end;
  }
  for (int x = 0; x < width; x++) {
    b->at[x] = x < p->w ? (b->at[x] - first) * 3 * 8 : 0;
  }
  b->first = first;
  b->span = (end - first) * 3;
  b->chunks = (b->span + 31) / 32;
  return 0;
}

/*
 * run() at LEVEL_AVX2: the source read 8 rows at a time into `block` (8 rows of rowbytes), each
 * block's horizontal pass into planar, then every output row. Returns 0, or -1 after libjpeg's
 * error_exit longjmp'd here (the message is in the decoder).
 */
__attribute__((target("avx2,fma"))) static int run_blocks(struct plan *p, struct source *src,
    struct blocks *b, uint8_t *block, size_t rowbytes) {
  struct decoder *d = src->decoder;
  if (d != NULL && setjmp(d->err.escape)) {
    return -1;
  }
  volatile int skip = src->skip;
  uint8_t *rows[8];
  for (int r = 0; r < 8; r++) {
    rows[r] = block + (size_t) r * rowbytes + (size_t) b->first * 3;
  }
  for (volatile int y0 = 0; y0 < p->rows; y0 += 8) {
    int count = p->rows - y0 < 8 ? p->rows - y0 : 8;
    for (int r = 0; r < count; r++) {
      uint8_t *line = block + (size_t) r * rowbytes;
      if (d != NULL) {
        do { /* the rows above the first one used are read and dropped */
          JSAMPROW l = line;
          if (jpeg_read_scanlines(&d->cinfo, &l, 1) != 1) {
            snprintf(d->err.message, JMSG_LENGTH_MAX,
                "the decoder stopped before the region's end");
            return -1;
          }
          d->row++;
        } while (skip-- > 0);
        skip = 0;
      } else {
        memcpy(line, src->memory + (size_t) (y0 + r) * src->stride, src->stride);
      }
    }
    /* a short last block repeats its last row: results in planar rows never read */
    uint8_t *used[8];
    int last = count > 1 ? count - 1 : 0;
    for (int r = 0; r < 8; r++) {
      used[r] = rows[r < last ? r : last];
    }
    transpose_block(b, used, b->wide);
    columns(b, b->wide, b->cols);
    untranspose(b, b->cols, b->planar, y0);
  }
  for (int y = 0; y < p->h; y++) {
    output_row(p, b, y);
  }
  return 0;
}
#endif

/*
 * Copies and checks the kernels, pads the horizontal one to a multiple of 4 taps and, when `split`
 * (LEVEL_SSE41), lays it out for the SSE4.1 sums. Returns NULL, or why the arguments are invalid.
 */
static const char *setup(JNIEnv *env, struct plan *p, int row_pixels, jintArray xstart,
    jintArray xk, int taps, jintArray ystart, jintArray ytaps, jintArray yk, int split) {
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
  /* the split coefficients only the SSE4.1 horizontal pass reads */
  p->xkv = split ? calloc((size_t) w * (size_t) p->groups * 32, sizeof(int16_t)) : NULL;
  p->ystart = malloc(sizeof(int32_t) * (size_t) h);
  p->ytaps = malloc(sizeof(int32_t) * (size_t) h);
  p->yk = malloc(sizeof(int32_t) * (size_t) h * (size_t) p->ksize);
  int32_t *given = malloc(sizeof(int32_t) * (size_t) w * (size_t) taps);
  if (!p->xstart || !p->xk || (split && !p->xkv) || !p->ystart || !p->ytaps || !p->yk
      || !given) {
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
      if (!split) {
        continue;
      }
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

#ifdef SPINDLE_X86
/*
 * The JNI call at LEVEL_AVX2, once the arguments are checked and the plan set up: the blocks'
 * buffers, the float32 arithmetic per channel (from `norm`: the means then the standard
 * deviations, or NULL for none), run_blocks. Frees the plan. Returns as the JNI call does.
 */
static jint resample_blocks(JNIEnv *env, struct plan *p, struct source *src, int stride,
    jfloatArray norm) {
  struct blocks b;
  memset(&b, 0, sizeof b);
  b.groups = (p->w + 7) / 8;
  b.prows = (p->rows + 7) / 8 * 8;
  const char *why = NULL;
  if (p->mode == MODE_FLOAT32_CHW) {
    if (norm != NULL && (*env)->GetArrayLength(env, norm) != 6) {
      why = "normalization must be 3 means and 3 standard deviations";
    } else if (norm != NULL) {
      float v[6];
      (*env)->GetFloatArrayRegion(env, norm, 0, 6, v);
      b.normalize = 1;
      for (int c = 0; c < 3; c++) {
        b.mean[c] = v[c];
        b.std[c] = v[3 + c];
        b.inverse[c] = 1.0f / v[3 + c];
      }
    }
    choose_norm(&b, p->floats);
  }
  hwc_shuffles(&b);
  uint8_t *buffers = NULL;
  size_t rowbytes = (size_t) stride + SLACK;
  if (why == NULL && trim(p, &b, stride / 3) != 0) {
    why = "out of memory";
  }
  size_t cw = (size_t) b.groups * 8;
  size_t sizes[] = {
    8 * rowbytes,                                    /* block */
    (size_t) b.chunks * 256,                         /* wide */
    3 * cw * 8,                                      /* cols */
    3 * cw * (size_t) b.prows,                       /* planar */
    3 * cw,                                          /* row */
  };
  uint8_t *parts[5];
  if (why == NULL) {
    size_t total = 0;
    for (int i = 0; i < 5; i++) {
      total += (sizes[i] + 63) & ~(size_t) 63;
    }
    buffers = malloc(total);
    if (buffers == NULL) {
      why = "out of memory";
    } else {
      uint8_t *at = buffers;
      for (int i = 0; i < 5; i++) {
        parts[i] = at;
        at += (sizes[i] + 63) & ~(size_t) 63;
      }
      /* the last chunk a transpose loads may reach past a row's bytes (into no output): zeros */
      for (int r = 0; r < 8; r++) {
        memset(parts[0] + (size_t) r * rowbytes + (size_t) stride, 0, SLACK);
      }
    }
  }
  int failed = 0;
  if (why == NULL) {
    b.wide = parts[1];
    b.cols = parts[2];
    b.planar = parts[3];
    b.row = parts[4];
    failed = run_blocks(p, src, &b, parts[0], rowbytes);
  }
  free(b.at);
  free(b.k);
  release(p, buffers);
  if (why != NULL) {
    char message[160];
    snprintf(message, sizeof message, "Native resample: %s", why);
    throw_image_exception(env, message);
    return -1;
  }
  if (failed) {
    throw_error(env, src->decoder);
    return -1;
  }
  return src->decoder != NULL ? (jint) src->decoder->err.pub.num_warnings : 0;
}
#endif

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
    jint h, jint mode, jfloatArray floats, jfloatArray norm, jshortArray halves, jlong dst,
    jlong dstBytes, jint level) {
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
    why = setup(env, &p, stride / 3, xstart, xk, taps, ystart, ytaps, yk, level == LEVEL_SSE41);
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
#ifdef SPINDLE_X86
  if (why == NULL && level == LEVEL_AVX2) {
    return resample_blocks(env, &p, &src, stride, norm);
  }
#endif
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
  if (level == LEVEL_SSE41) {
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
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return LEVEL_AVX2;
  }
  if (__builtin_cpu_supports("sse4.1")) {
    return LEVEL_SSE41;
  }
#endif
  return LEVEL_C;
}
