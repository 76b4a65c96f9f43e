/*
 * The seek index of the native JPEG region decoder: where each stretch of MCUs begins in a JPEG's
 * Huffman-coded scan, so that decoding the same image again (the next epoch) starts each row of
 * the region at the MCU it needs instead of Huffman-decoding every MCU before it.
 *
 * A sequential JPEG without restart markers can only be entropy-decoded from its start: every MCU
 * is a run of variable-length codes, and each block's DC coefficient is coded as the difference
 * from the previous block's. libjpeg-turbo therefore Huffman-decodes all the MCUs above a region
 * (jpeg_skip_scanlines) and all those left and right of it in each of its rows (jpeg_crop_scanline
 * only leaves them out of the IDCT): for a centre crop that is about half the Huffman decoding,
 * the largest part of the decode. The state that lets decoding resume at an MCU is small: the
 * position of its first bit in the scan and the components' last DC values. The first decode of an
 * image records that state every `step` MCUs of each row it passes through (what libjpeg-turbo's
 * Huffman decoder holds at that MCU: its input position less the bits it read ahead, and its DC
 * predictors); a later decode of the same bytes restores it at the first MCU of each row the
 * region needs and returns the MCUs outside the region undecoded. libjpeg-turbo never uses their
 * coefficients (they lie outside the region's columns, or in rows it skips), so the pixels are the
 * same bytes as without the index: NativeJpegSeekSuite decodes every region both ways.
 *
 * How: the Huffman decoder's decode_mcu is replaced, per decompressor, by seek_decode_mcu, which
 * calls libjpeg-turbo's own after recording or restoring the state. The state lives at the head
 * of libjpeg-turbo's private huff_entropy_decoder (jdhuff.c, jdhuff.h); its layout is that of
 * libjpeg-turbo 2.0 and 2.1, the only versions this file enables the index for, and is checked at
 * the first MCU of every recording (a fresh decoder's state: no bits read, DC predictors zero).
 * Only single-scan, three-component, Huffman-coded JPEGs without restart markers at full scale
 * are indexed; others decode as before.
 *
 * The index is an array of int64 (handed to and from Java as a long[], kept by JpegSeekIndex):
 * a header (IX_*) and, per MCU row, `per_row` slots of one value each: the bit position (byte
 * offset times 8 plus the bit within the byte, counting stuffed bytes) in the low 31 bits, the
 * three DC predictors above it, 11 bits each (a baseline JPEG's DC coefficients lie in
 * [-1024, 1023]; a state outside that, from corrupt data, is not recorded). Rows [0, known) have
 * all their slots and slot 0 of row `known` is set.
 */
#include <jni.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jpegint.h>

#include "spindle_native.h"

#if defined(LIBJPEG_TURBO_VERSION_NUMBER) && LIBJPEG_TURBO_VERSION_NUMBER >= 2000000 \
    && LIBJPEG_TURBO_VERSION_NUMBER < 2002000 && SIZE_MAX == UINT64_MAX
#define SEEK_SUPPORTED 1
#else
#define SEEK_SUPPORTED 0
#endif

enum { IX_TAG, IX_LENGTH, IX_MCUS, IX_ROWS, IX_STEP, IX_KNOWN, IX_HEADER };

#define TAG ((int64_t) 0x53504e4458000002LL) /* "SPNDX", version 2 */
#define COMPONENTS 3
#define POS_BITS 31
#define DC_BITS 11
#define MAX_LENGTH ((size_t) 1 << (POS_BITS - 3)) /* bytes: 256 MiB */

/* The head of libjpeg-turbo 2.x's huff_entropy_decoder: its public part, the bit buffer
 * (bitread_perm_state: bit_buf_type is size_t on LP64) and the DC predictors (savable_state). */
struct huff_head {
  struct jpeg_entropy_decoder pub;
  struct {
    size_t get_buffer;
    int bits_left;
  } bitstate;
  struct {
    int last_dc_val[MAX_COMPS_IN_SCAN];
  } saved;
};

struct seek {
  boolean (*decode)(j_decompress_ptr, JBLOCKROW *); /* libjpeg-turbo's decode_mcu */
  const JOCTET *base;                                /* the JPEG's bytes */
  size_t length;
  int64_t *ix;
  int mcus;       /* MCUs per row */
  int rows;       /* MCU rows */
  int step;       /* MCUs between slots */
  int per_row;    /* slots per row */
  int known;      /* rows fully recorded */
  int known_open; /* ... when the decode began */
  int from, to;   /* in indexed rows, the MCUs decoded: from a slot to the region's last */
  int row, col;   /* the MCU decode_mcu is called for */
  int stale;      /* the decoder's state is not that of MCU (row, col): restore before decoding */
  int frozen;     /* a state could not be recorded: the index grows no further */
};

/* Set when a recording's first state was not a fresh decoder's: the layout above is wrong. */
static volatile int layout_wrong;

static int64_t *slot(struct seek *s, int row, int j) {
  return s->ix + IX_HEADER + (size_t) row * (size_t) s->per_row + (size_t) j;
}

/* Escapes to the JNI call's setjmp with `message` (never expected: a bug in this file). */
static void fail(j_decompress_ptr cinfo, const char *message) {
  struct decoder *d = (struct decoder *) cinfo;
  snprintf(d->err.message, JMSG_LENGTH_MAX, "seek index: %s", message);
  longjmp(d->err.escape, 1);
}

/* Records the Huffman decoder's state at the start of MCU (row, j * step); 0 when it cannot,
 * or after libjpeg-turbo warned about corrupt data: a later decode must meet that data again (and
 * warn again) rather than skip past it. */
static int record(struct seek *s, j_decompress_ptr cinfo, int row, int j) {
  struct huff_head *h = (struct huff_head *) cinfo->entropy;
  const JOCTET *p = cinfo->src->next_input_byte;
  if (cinfo->err->num_warnings > 0 || cinfo->unread_marker != 0 || h->pub.insufficient_data
      || p < s->base || p > s->base + s->length || h->bitstate.bits_left < 0
      || h->bitstate.bits_left > 64) {
    return 0;
  }
  if (row == 0 && j == 0 && (h->bitstate.bits_left != 0 || h->bitstate.get_buffer != 0
      || h->saved.last_dc_val[0] != 0 || h->saved.last_dc_val[1] != 0
      || h->saved.last_dc_val[2] != 0 || h->pub.decode_mcu == NULL)) {
    layout_wrong = 1;
    return 0;
  }
  /* the unread bits are the last bits_left bits of the bytes read: walk back over them (a 0x00
   * after 0xFF is stuffing and holds none) */
  int n = h->bitstate.bits_left;
  int64_t pos;
  for (;;) {
    if (n == 0) {
      pos = (int64_t) (p - s->base) << 3;
      break;
    }
    if (p <= s->base) {
      return 0;
    }
    const JOCTET *q = p - 1;
    if (*q == 0x00 && q > s->base && q[-1] == 0xFF) {
      p = q;
    } else if (n >= 8) {
      n -= 8;
      p = q;
    } else {
      pos = ((int64_t) (q - s->base) << 3) | (8 - n);
      break;
    }
  }
  uint64_t value = (uint64_t) pos;
  for (int ci = 0; ci < COMPONENTS; ci++) {
    int v = h->saved.last_dc_val[ci];
    if (v < -(1 << (DC_BITS - 1)) || v >= 1 << (DC_BITS - 1)) {
      return 0;
    }
    value |= (uint64_t) (v & ((1 << DC_BITS) - 1)) << (POS_BITS + DC_BITS * ci);
  }
  *slot(s, row, j) = (int64_t) value;
  return 1;
}

/* Puts the Huffman decoder in the state recorded at the start of MCU (row, j * step). */
static void restore(struct seek *s, j_decompress_ptr cinfo, int row, int j) {
  struct huff_head *h = (struct huff_head *) cinfo->entropy;
  uint64_t value = (uint64_t) *slot(s, row, j);
  size_t pos = (size_t) (value & (((uint64_t) 1 << POS_BITS) - 1));
  const JOCTET *q = s->base + (pos >> 3);
  int bit = (int) (pos & 7);
  if (q >= s->base + s->length) {
    fail(cinfo, "a recorded position is outside the data");
  }
  if (bit == 0) {
    h->bitstate.get_buffer = 0;
    h->bitstate.bits_left = 0;
  } else { /* the byte's last 8 - bit bits are unread */
    h->bitstate.get_buffer = *q;
    h->bitstate.bits_left = 8 - bit;
    q += *q == 0xFF ? 2 : 1;
  }
  cinfo->src->next_input_byte = q;
  cinfo->src->bytes_in_buffer = s->length - (size_t) (q - s->base);
  for (int ci = 0; ci < COMPONENTS; ci++) { /* sign-extended from DC_BITS */
    int v = (int) ((value >> (POS_BITS + DC_BITS * ci)) & ((1 << DC_BITS) - 1));
    h->saved.last_dc_val[ci] = v >= 1 << (DC_BITS - 1) ? v - (1 << DC_BITS) : v;
  }
  cinfo->unread_marker = 0;
}

/*
 * decode_mcu with the index: in rows it knows, only the MCUs from the slot at or before the
 * region's first column to its last are decoded (the decoder put at that slot first); below them,
 * every MCU is decoded and every step-th one's state recorded.
 */
static boolean seek_decode_mcu(j_decompress_ptr cinfo, JBLOCKROW *data) {
  struct seek *s = ((struct decoder *) cinfo)->seek;
  int row = (int) cinfo->input_iMCU_row;
  if (row != s->row) {
    s->row = row;
    s->col = 0;
  }
  int col = s->col++;
  if (row < s->known) {
    if (data == NULL || col < s->from || col > s->to) {
      s->stale = 1; /* coefficients libjpeg-turbo drops: left undecoded (zero) */
      return TRUE;
    }
    if (s->stale) {
      if (col != s->from) {
        fail(cinfo, "an MCU was skipped inside the region");
      }
      restore(s, cinfo, row, col / s->step);
      s->stale = 0;
    }
    return s->decode(cinfo, data);
  }
  if (s->stale) { /* the first MCU below the known rows */
    if (row != s->known || col != 0) {
      fail(cinfo, "the known rows ended elsewhere than at a row's start");
    }
    restore(s, cinfo, row, 0);
    s->stale = 0;
  }
  if (!s->frozen && col % s->step == 0) {
    if (!record(s, cinfo, row, col / s->step)) {
      s->frozen = 1;
    } else if (col == 0 && row > s->known) {
      s->known = row;
    }
  }
  return s->decode(cinfo, data);
}

int seek_open(struct decoder *d, const JOCTET *data, size_t length, int scale, const int64_t *in,
    size_t in_length) {
  j_decompress_ptr cinfo = &d->cinfo;
  if (!SEEK_SUPPORTED || layout_wrong || scale != 1 || cinfo->progressive_mode || cinfo->arith_code
      || cinfo->restart_interval != 0 || cinfo->num_components != COMPONENTS
      || cinfo->comps_in_scan != COMPONENTS || cinfo->inputctl->has_multiple_scans
      || cinfo->entropy == NULL || cinfo->entropy->decode_mcu == NULL
      || cinfo->MCUs_per_row == 0 || cinfo->total_iMCU_rows == 0 || length > MAX_LENGTH) {
    return 0;
  }
  struct seek *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return 0;
  }
  s->base = data;
  s->length = length;
  s->mcus = (int) cinfo->MCUs_per_row;
  s->rows = (int) cinfo->total_iMCU_rows;
  s->step = s->mcus > 64 ? (s->mcus + 15) / 16 : 4; /* at most 16 slots a row */
  s->per_row = (s->mcus + s->step - 1) / s->step;
  size_t size = IX_HEADER + (size_t) s->rows * (size_t) s->per_row;
  s->ix = calloc(size, sizeof *s->ix);
  if (s->ix == NULL) {
    free(s);
    return 0;
  }
  s->ix[IX_TAG] = TAG;
  s->ix[IX_LENGTH] = (int64_t) length;
  s->ix[IX_MCUS] = s->mcus;
  s->ix[IX_ROWS] = s->rows;
  s->ix[IX_STEP] = s->step;
  if (in != NULL && in_length >= IX_HEADER && in_length <= size && in[IX_TAG] == TAG
      && in[IX_LENGTH] == (int64_t) length && in[IX_MCUS] == s->mcus && in[IX_ROWS] == s->rows
      && in[IX_STEP] == s->step && in[IX_KNOWN] > 0 && in[IX_KNOWN] < s->rows
      && in_length >= IX_HEADER + (size_t) (in[IX_KNOWN] + 1) * (size_t) s->per_row) {
    memcpy(s->ix + IX_HEADER, in + IX_HEADER, (in_length - IX_HEADER) * sizeof *in);
    s->known = (int) in[IX_KNOWN];
  }
  s->known_open = s->known;
  int first = (int) cinfo->master->first_iMCU_col;
  int last = (int) cinfo->master->last_iMCU_col;
  if (first < 0 || last >= s->mcus || first > last) {
    first = 0;
    last = s->mcus - 1;
  }
  s->from = first / s->step * s->step;
  s->to = last;
  s->row = -1;
  s->decode = cinfo->entropy->decode_mcu;
  cinfo->entropy->decode_mcu = seek_decode_mcu;
  d->seek = s;
  return 1;
}

/*
 * Records the rest of the index: the rows below the region entropy-decoded (jpeg_skip_scanlines
 * passes whole iMCU rows to decode_mcu without a destination: Huffman decoding only, no IDCT,
 * upsampling or colour conversion), so that a later decode of the same image finds every row it
 * may need indexed (a random crop reaches other rows each epoch; without this, each of those
 * decodes Huffman-decoded whole rows again to grow the index). Once per image and JVM, in the
 * decode that first meets it. Stops where libjpeg-turbo warns (record() keeps nothing from there
 * on) or fails (the rows known before are kept).
 */
static void complete(struct decoder *d) {
  struct seek *s = d->seek;
  j_decompress_ptr cinfo = &d->cinfo;
  if (s->frozen || s->known >= s->rows - 1 || cinfo->output_scanline >= cinfo->output_height) {
    return;
  }
  /* to the last line but one (a skip to the end returns without decoding), then that line read
   * (it decodes the last iMCU row, whose first MCU is the last state recorded) */
  JSAMPROW line = malloc((size_t) cinfo->output_width * (size_t) cinfo->output_components);
  if (line == NULL) {
    return;
  }
  /* volatile: read after a longjmp */
  volatile int known = s->known;
  if (setjmp(d->err.escape)) {
    s->known = known;
    s->frozen = 1;
    free(line);
    return;
  }
  JDIMENSION left = cinfo->output_height - cinfo->output_scanline;
  if (left > 1) {
    jpeg_skip_scanlines(cinfo, left - 1);
  }
  while (cinfo->output_scanline < cinfo->output_height) {
    if (jpeg_read_scanlines(cinfo, &line, 1) != 1) {
      break;
    }
  }
  free(line);
}

jlongArray seek_export(JNIEnv *env, struct decoder *d) {
  struct seek *s = d->seek;
  if (s == NULL || d->err.pub.num_warnings > 0) {
    return NULL; /* libjpeg-turbo warned: corrupt data is never skipped over */
  }
  complete(d);
  if (s->known <= s->known_open) {
    return NULL; /* nothing new */
  }
  s->ix[IX_KNOWN] = s->known;
  /* the whole array, rows not yet known zero: every export of an image has the same length, so
   * JpegSeekIndex copies a grown index into the array it keeps rather than replacing it */
  size_t size = IX_HEADER + (size_t) s->rows * (size_t) s->per_row;
  jlongArray out = (*env)->NewLongArray(env, (jsize) size);
  if (out != NULL) {
    (*env)->SetLongArrayRegion(env, out, 0, (jsize) size, (const jlong *) s->ix);
  }
  return out;
}

void seek_free(struct decoder *d) {
  if (d->seek != NULL) {
    free(d->seek->ix);
    free(d->seek);
    d->seek = NULL;
  }
}
