/*
 * Spindle's native JPEG region decoder: the JNI side of dev.spindle.spark.image.NativeJpeg.
 *
 * Decodes the part of a JPEG a transform reads, with libjpeg-turbo's own API (linked statically,
 * its symbols hidden): jpeg_crop_scanline for the columns, jpeg_skip_scanlines for the rows
 * above, and no decoding of the rows below; scale_denom for DCT-domain 1/2, 1/4, 1/8 decoding.
 * Output: interleaved RGB (JCS_RGB, libjpeg's ISLOW IDCT and fancy upsampling, as a whole-image
 * decode by Pillow or OpenCV), the rows of the region one after another.
 *
 * Errors: libjpeg's error_exit longjmps back into decode(), which destroys the decompressor and
 * throws dev.spindle.spark.image.ImageException ("Cannot decode JPEG: " and libjpeg's message).
 * setjmp/longjmp never cross a JNI frame. Warnings (corrupt data libjpeg decodes as grey) are counted, not printed.
 *
 * Thread-safe: no global state; every call has its own decompressor.
 */
#include <jni.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

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

/* decode()'s return values besides 0 (see NativeJpeg.java) */
#define UNSUPPORTED 1 /* a colour space Pillow converts differently (CMYK, YCCK): decode whole */
#define TOO_SMALL 2   /* the output buffer is too small: result[0] says how many bytes it needs */

/* result[] layout (NativeJpeg.java) */
enum {
  R_NEEDED, R_WIDTH, R_HEIGHT, R_X, R_Y, R_STRIDE, R_ROWS, R_WARNINGS, R_PROGRESSIVE, R_COUNT
};

struct error_manager {
  struct jpeg_error_mgr pub;
  jmp_buf escape;
  char message[JMSG_LENGTH_MAX];
};

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

static void throw_image_exception(JNIEnv *env, const char *message) {
  jclass cls = (*env)->FindClass(env, "dev/spindle/spark/image/ImageException");
  if (cls != NULL) {
    (*env)->ThrowNew(env, cls, message);
  }
}

static int clamp(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Decodes columns [x0, x1) and rows [y0, y1) of the image at 1/scale (output coordinates, which
 * the caller clamps to the scaled image) into out, widened by `margin` pixels on each side where
 * the image has them and then by libjpeg to whole iMCU columns. The region decoded is
 * result[R_X], result[R_Y] (its first column and row), result[R_STRIDE] pixels wide,
 * result[R_ROWS] rows; result[R_WIDTH] x result[R_HEIGHT] is the scaled image's size.
 * With x1 <= x0 it only reads the header: sizes and result[R_PROGRESSIVE].
 */
JNIEXPORT jint JNICALL Java_dev_spindle_spark_image_NativeJpeg_decode(JNIEnv *env, jclass cls,
    jobject in, jint length, jint scale, jint x0, jint y0, jint x1, jint y1, jint margin,
    jobject out, jintArray result) {
  (void) cls;
  unsigned char *src = (*env)->GetDirectBufferAddress(env, in);
  unsigned char *dst = out == NULL ? NULL : (*env)->GetDirectBufferAddress(env, out);
  jlong capacity = out == NULL ? 0 : (*env)->GetDirectBufferCapacity(env, out);
  if (src == NULL || (out != NULL && dst == NULL)) {
    throw_image_exception(env, "Native JPEG decoder: buffers are not direct");
    return -1;
  }
  jint r[R_COUNT];
  memset(r, 0, sizeof r);

  struct jpeg_decompress_struct cinfo;
  struct error_manager err;
  /* volatile: read after a longjmp */
  volatile int created = 0;
  cinfo.err = init_error(&err.pub);
  err.message[0] = '\0';
  if (setjmp(err.escape)) {
    if (created) {
      jpeg_destroy_decompress(&cinfo);
    }
    char message[JMSG_LENGTH_MAX + 32];
    snprintf(message, sizeof message, "Cannot decode JPEG: %s", err.message);
    throw_image_exception(env, message);
    return -1;
  }
  jpeg_create_decompress(&cinfo);
  created = 1;
  jpeg_mem_src(&cinfo, src, (unsigned long) length);
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK
      || cinfo.num_components == 4) {
    jpeg_destroy_decompress(&cinfo);
    return UNSUPPORTED;
  }
  cinfo.out_color_space = JCS_RGB;
  cinfo.scale_num = 1;
  cinfo.scale_denom = (unsigned int) scale;
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.do_fancy_upsampling = TRUE;
  jpeg_calc_output_dimensions(&cinfo);
  r[R_WIDTH] = (jint) cinfo.output_width;
  r[R_HEIGHT] = (jint) cinfo.output_height;
  r[R_PROGRESSIVE] = cinfo.progressive_mode ? 1 : 0;
  if (x1 <= x0) {
    jpeg_destroy_decompress(&cinfo);
    (*env)->SetIntArrayRegion(env, result, 0, R_COUNT, r);
    return 0;
  }
  jpeg_start_decompress(&cinfo);
  JDIMENSION xoff = (JDIMENSION) clamp(x0 - margin, 0, (int) cinfo.output_width);
  JDIMENSION xend = (JDIMENSION) clamp(x1 + margin, 0, (int) cinfo.output_width);
  JDIMENSION width = xend - xoff;
  if (xoff > 0 || width < cinfo.output_width) {
    jpeg_crop_scanline(&cinfo, &xoff, &width); /* widens to whole iMCU columns */
  }
  int first = clamp(y0 - margin, 0, (int) cinfo.output_height);
  int end = clamp(y1 + margin, 0, (int) cinfo.output_height);
  jlong stride = (jlong) width * 3;
  jlong needed = stride * (end - first);
  if (needed > capacity) {
    jpeg_abort_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    r[R_NEEDED] = needed > 0x7fffffff ? 0x7fffffff : (jint) needed;
    (*env)->SetIntArrayRegion(env, result, 0, R_COUNT, r);
    return TOO_SMALL;
  }
  if (first > 0) {
    JDIMENSION skipped = jpeg_skip_scanlines(&cinfo, (JDIMENSION) first);
    if ((int) skipped != first) {
      jpeg_destroy_decompress(&cinfo);
      throw_image_exception(env, "Cannot decode JPEG: could not skip to the region's first row");
      return -1;
    }
  }
  for (int row = first; row < end;) {
    JSAMPROW line = dst + (jlong) (row - first) * stride;
    JDIMENSION got = jpeg_read_scanlines(&cinfo, &line, 1);
    if (got == 0) {
      jpeg_destroy_decompress(&cinfo);
      throw_image_exception(env,
                            "Cannot decode JPEG: the decoder stopped before the region's end");
      return -1;
    }
    row += (int) got;
  }
  r[R_X] = (jint) xoff;
  r[R_Y] = first;
  r[R_STRIDE] = (jint) width;
  r[R_ROWS] = end - first;
  r[R_WARNINGS] = (jint) err.pub.num_warnings;
  r[R_NEEDED] = (jint) needed;
  /* the rows below the region are never decoded: abort rather than finish */
  jpeg_abort_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  (*env)->SetIntArrayRegion(env, result, 0, R_COUNT, r);
  return 0;
}
