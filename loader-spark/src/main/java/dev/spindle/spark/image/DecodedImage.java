package dev.spindle.spark.image;

/**
 * A decoded image: interleaved RGB bytes, {@code width * 3} per row, in {@code pixels[0 .. width *
 * height * 3)}. The array belongs to the decoding thread's {@link DecodeScratch} and is overwritten
 * by its next decode.
 */
record DecodedImage(byte[] pixels, int width, int height) {}
