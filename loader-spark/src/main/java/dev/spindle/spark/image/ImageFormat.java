package dev.spindle.spark.image;

/** An encoded image format Spindle decodes, recognised by its magic bytes (never by file name). */
public enum ImageFormat {
  JPEG,
  PNG
}
