/*
 * Spindle's native JPEG region decoder: the JNI side of dev.spindle.spark.image.NativeJpeg.
 *
 * Decodes the part of a JPEG a transform reads, with libjpeg-turbo's own API (linked statically,
 * its symbols hidden): jpeg_crop_scanline for the columns, jpeg_skip_scanlines for the rows
 * above, and no decoding of the rows below; scale_denom for DCT-domain 1/2, 1/4, 1/8 decoding.
 * Output: interleaved RGB (JCS_RGB, libjpeg's ISLOW IDCT and fancy upsampling, as a whole-image
 * decode by Pillow or OpenCV), the rows of the region one after another.
 *
 * Errors: libjpeg's error_exit longjmps back into the JNI function that called it (open, read),
 * which throws dev.spindle.spark.image.ImageException ("Cannot decode JPEG: " and libjpeg's
 * message); setjmp/longjmp never cross a JNI frame. Warnings (corrupt data libjpeg decodes as
 * grey) are counted, not printed.
 *
 * Thread-safe: no global state; each open region has its own decompressor, used by one thread
 * at a time (NativeJpeg.Band).
 */
#include <jni.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "spindle_native.h"

/* libjpeg's message table, built from jerror.h as jerror.c builds it. Spindle sets up its own
 * error manager instead of calling jpeg_std_error: Debian's libjpeg.a is not position-independent
 * code, and jerror.c's reference to stderr is the one relocation that a shared library cannot
 * take, so jerror.o must stay out of the link. */
#define JVERSION "libjpeg-turbo (linked into Spindle)" /* jversion.h is not installed */
#define JCOPYRIGHT_SHORT "libjpeg-turbo"
#define JMESSAGE(code, string) string,
static const char *const MESSAGES[] = {
#include <jerror.h>
  NULL
};
#undef JMESSAGE

/* open()'s result[] layout (NativeJpeg.java) */
enum { R_WIDTH, R_HEIGHT, R_X, R_Y, R_STRIDE, R_ROWS, R_COUNT };

static void error_exit(j_common_ptr cinfo) {
  struct error_manager *err = (struct error_manager *) cinfo->err;
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->escape, 1);
}

static void emit_message(j_common_ptr cinfo, int level) {
  if (level < 0) {
    cinfo->err->num_warnings++; /* corrupt data: NativeJpeg checks the scans, as for OpenCV */
  }
}

static void output_message(j_common_ptr cinfo) {
  (void) cinfo; /* never print: errors are thrown, warnings counted */
}

/* jerror.c's format_message: the message of msg_code with its parameters. */
static void format_message(j_common_ptr cinfo, char *buffer) {
  struct jpeg_error_mgr *err = cinfo->err;
  int code = err->msg_code;
  const char *format = code > 0 && code < (int) (sizeof MESSAGES / sizeof MESSAGES[0]) - 1
      ? MESSAGES[code] : NULL;
  if (format == NULL) {
    snprintf(buffer, JMSG_LENGTH_MAX, "libjpeg error %d", code);
    return;
  }
  int is_string = 0;
  for (const char *p = format; *p != '\0'; p++) {
    if (*p == '%') {
      is_string = p[1] == 's';
      break;
    }
  }
  if (is_string) {
    snprintf(buffer, JMSG_LENGTH_MAX, format, err->msg_parm.s);
  } else {
    snprintf(buffer, JMSG_LENGTH_MAX, format, err->msg_parm.i[0], err->msg_parm.i[1],
             err->msg_parm.i[2], err->msg_parm.i[3], err->msg_parm.i[4], err->msg_parm.i[5],
             err->msg_parm.i[6], err->msg_parm.i[7]);
  }
}

static void reset_error_mgr(j_common_ptr cinfo) {
  cinfo->err->num_warnings = 0;
  cinfo->err->msg_code = 0;
}

/* jpeg_std_error's fields, with Spindle's handlers */
static struct jpeg_error_mgr *init_error(struct jpeg_error_mgr *err) {
  memset(err, 0, sizeof *err);
  err->error_exit = error_exit;
  err->emit_message = emit_message;
  err->output_message = output_message;
  err->format_message = format_message;
  err->reset_error_mgr = reset_error_mgr;
  err->jpeg_message_table = MESSAGES;
  err->last_jpeg_message = (int) (sizeof MESSAGES / sizeof MESSAGES[0]) - 2;
  return err;
}

void throw_image_exception(JNIEnv *env, const char *message) {
  jclass cls = (*env)->FindClass(env, "dev/spindle/spark/image/ImageException");
  if (cls != NULL) {
    (*env)->ThrowNew(env, cls, message);
  }
}

static int clamp(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

void throw_error(JNIEnv *env, struct decoder *d) {
  char message[JMSG_LENGTH_MAX + 32];
  snprintf(message, sizeof message, "Cannot decode JPEG: %s", d->err.message);
  throw_image_exception(env, message);
}

static void destroy(struct decoder *d) {
  seek_free(d);
  if (d->created) {
    jpeg_destroy_decompress(&d->cinfo); /* also after an error, or with rows left unread */
  }
  free(d);
}

/*
 * Opens the JPEG in `in` (which must stay unchanged until close) for columns [x0, x1) and rows
 * [y0, y1) at 1/scale (output coordinates, clamped to the scaled image), widened by `margin`
 * pixels on each side where the image has them and then by libjpeg to whole iMCU columns; skips
 * the rows above. The region: result[R_X], result[R_Y] (first column and row),
 * result[R_STRIDE] pixels per row, result[R_ROWS] rows; result[R_WIDTH] x result[R_HEIGHT] is
 * the scaled image's size. Returns the handle for read() and close(), or 0 for a colour space
 * left to OpenCV (CMYK, YCCK) or after throwing ImageException (nothing to close then).
 */
JNIEXPORT jlong JNICALL Java_dev_spindle_spark_image_NativeJpeg_open(JNIEnv *env, jclass cls,
    jobject in, jint length, jint scale, jint x0, jint y0, jint x1, jint y1, jint margin,
    jlongArray index, jintArray result) {
  (void) cls;
  unsigned char *src = (*env)->GetDirectBufferAddress(env, in);
  if (src == NULL) {
    throw_image_exception(env, "Native JPEG decoder: the input buffer is not direct");
    return 0;
  }
  struct decoder *d = calloc(1, sizeof *d);
  if (d == NULL) {
    throw_image_exception(env, "Native JPEG decoder: out of memory");
    return 0;
  }
  d->cinfo.err = init_error(&d->err.pub);
  if (setjmp(d->err.escape)) {
    throw_error(env, d);
    destroy(d);
    return 0;
  }
  jpeg_create_decompress(&d->cinfo);
  d->created = 1;
  j_decompress_ptr cinfo = &d->cinfo;
  jpeg_mem_src(cinfo, src, (unsigned long) length);
  jpeg_read_header(cinfo, TRUE);
  if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK
      || cinfo->num_components == 4) {
    destroy(d);
    return 0;
  }
  cinfo->out_color_space = JCS_RGB;
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned int) scale;
  cinfo->dct_method = JDCT_ISLOW;
  cinfo->do_fancy_upsampling = TRUE;
  jpeg_start_decompress(cinfo);
  /* the scaled image's size: jpeg_crop_scanline sets output_width to the region's */
  int full_width = (int) cinfo->output_width;
  int full_height = (int) cinfo->output_height;
  JDIMENSION xoff = (JDIMENSION) clamp(x0 - margin, 0, full_width - 1);
  JDIMENSION xend = (JDIMENSION) clamp(x1 + margin, (int) xoff + 1, full_width);
  JDIMENSION width = xend - xoff;
  if (xoff > 0 || (int) width < full_width) {
    jpeg_crop_scanline(cinfo, &xoff, &width); /* widens to whole iMCU columns */
  }
  if (index != NULL) {
    jsize n = (*env)->GetArrayLength(env, index);
    jlong *known = n > 0 ? (*env)->GetLongArrayElements(env, index, NULL) : NULL;
    seek_open(d, src, (size_t) length, scale, (const int64_t *) known, (size_t) n);
    if (known != NULL) {
      (*env)->ReleaseLongArrayElements(env, index, known, JNI_ABORT);
    }
  }
  int first = clamp(y0 - margin, 0, full_height);
  d->end = clamp(y1 + margin, first, full_height);
  if (first > 0 && (int) jpeg_skip_scanlines(cinfo, (JDIMENSION) first) != first) {
    snprintf(d->err.message, JMSG_LENGTH_MAX, "could not skip to the region's first row");
    throw_error(env, d);
    destroy(d);
    return 0;
  }
  d->row = first;
  d->width = (int) width;
  jint r[R_COUNT];
  memset(r, 0, sizeof r);
  r[R_WIDTH] = (jint) full_width;
  r[R_HEIGHT] = (jint) full_height;
  r[R_X] = (jint) xoff;
  r[R_Y] = first;
  r[R_STRIDE] = (jint) width;
  r[R_ROWS] = d->end - first;
  (*env)->SetIntArrayRegion(env, result, 0, R_COUNT, r);
  return (jlong) (intptr_t) d;
}

/*
 * Decodes the region's next `rows` rows into `out` from byte `offset`, one after another (the
 * region's width times 3 bytes each). Returns libjpeg's warnings so far (corrupt data it decoded
 * as grey), or -1 after throwing ImageException (close the handle still).
 */
JNIEXPORT jint JNICALL Java_dev_spindle_spark_image_NativeJpeg_read(JNIEnv *env, jclass cls,
    jlong handle, jobject out, jlong offset, jint rows) {
  (void) cls;
  struct decoder *d = (struct decoder *) (intptr_t) handle;
  unsigned char *dst = (*env)->GetDirectBufferAddress(env, out);
  jlong capacity = (*env)->GetDirectBufferCapacity(env, out);
  jlong stride = (jlong) d->width * 3;
  if (dst == NULL || rows < 0 || d->row + rows > d->end || offset < 0
      || offset + stride * rows > capacity) {
    throw_image_exception(env, "Native JPEG decoder: invalid read of the region");
    return -1;
  }
  if (setjmp(d->err.escape)) {
    throw_error(env, d);
    return -1;
  }
  for (int i = 0; i < rows;) {
    JSAMPROW line = dst + offset + stride * i;
    JDIMENSION got = jpeg_read_scanlines(&d->cinfo, &line, 1);
    if (got == 0) {
      snprintf(d->err.message, JMSG_LENGTH_MAX, "the decoder stopped before the region's end");
      throw_error(env, d);
      return -1;
    }
    i += (int) got;
  }
  d->row += rows;
  return (jint) d->err.pub.num_warnings;
}

/* The region's seek index when this decode added to it (spindle_seek.c), else null. */
JNIEXPORT jlongArray JNICALL Java_dev_spindle_spark_image_NativeJpeg_seekIndex(JNIEnv *env,
    jclass cls, jlong handle) {
  (void) cls;
  return seek_export(env, (struct decoder *) (intptr_t) handle);
}

/* Frees the decoder (the rows below the region are never decoded). */
JNIEXPORT void JNICALL Java_dev_spindle_spark_image_NativeJpeg_close(JNIEnv *env, jclass cls,
    jlong handle) {
  (void) env;
  (void) cls;
  destroy((struct decoder *) (intptr_t) handle);
}
