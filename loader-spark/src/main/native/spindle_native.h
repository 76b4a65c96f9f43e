/*
 * What spindle_jpeg.c (the region decoder) and spindle_resample.c (the resample fused with it)
 * share: an open region's decoder and the helpers that throw ImageException. Include after
 * <jni.h>, <setjmp.h>, <stdio.h> and <jpeglib.h>.
 */
#ifndef SPINDLE_NATIVE_H
#define SPINDLE_NATIVE_H

struct error_manager {
  struct jpeg_error_mgr pub;
  jmp_buf escape;
  char message[JMSG_LENGTH_MAX];
};

/* One region being decoded: opened by open(), its rows read in order by read() or by the fused
 * resample (spindle_resample.c), freed by close(). */
struct decoder {
  struct jpeg_decompress_struct cinfo;
  struct error_manager err;
  int created;
  int row;  /* the next row read() returns */
  int end;  /* the row after the region's last */
  int width; /* pixels per row */
  struct seek *seek; /* the seek index (spindle_seek.c), or NULL */
};

/* Throws dev.spindle.spark.image.ImageException with `message`. */
void throw_image_exception(JNIEnv *env, const char *message);

/* Throws ImageException "Cannot decode JPEG: " and libjpeg's message in d->err. */
void throw_error(JNIEnv *env, struct decoder *d);

/* Installs the seek index on d's decompressor (after jpeg_start_decompress and
 * jpeg_crop_scanline, before any row is read), starting from the index `in` (`in_length` values,
 * NULL for none) when it is one of these bytes'. 0 when the JPEG is not one it indexes. */
int seek_open(struct decoder *d, const JOCTET *data, size_t length, int scale, const int64_t *in,
    size_t in_length);

/* The index as it stands when this decode recorded rows it did not know (first recording the rows
 * below the region, Huffman decoding only), else NULL. */
jlongArray seek_export(JNIEnv *env, struct decoder *d);

/* Frees the seek index (NULL-safe). */
void seek_free(struct decoder *d);

#endif
