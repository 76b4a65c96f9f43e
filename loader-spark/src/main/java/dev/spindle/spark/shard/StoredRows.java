package dev.spindle.spark.shard;

import java.util.function.Supplier;

/**
 * Turns one row of a {@code preprocess} output's part file into a {@link Sample} holding its stored
 * pixels ({@link Sample#stored()}), whichever format it was read from. The row keeps the key it was
 * stored with (the original sample's), so quarantine lines still name that sample; a null column,
 * pixels over {@code spark.spindle.maxSampleBytes} (not copied) or a label outside {@link
 * LabelRule} makes a sample with a problem that names the file's row. Stateless.
 */
final class StoredRows {
  private StoredRows() {}

  /**
   * @param row the row in the file, from 0: the sample's position in its shard
   * @param key the stored key, or null
   * @param imageBytes the stored image's length, or -1 when it is null
   * @param pixels copies the stored image out (called only for an image within the limit)
   * @param label the stored label, or null
   * @param index the stored index, or null
   */
  static Sample sample(
      Shard shard,
      String fileName,
      long row,
      String key,
      int imageBytes,
      Supplier<byte[]> pixels,
      Integer label,
      Long index,
      SampleLimits limits) {
    return sample(shard, fileName, row, key, imageBytes, pixels, label, index, limits, b -> {});
  }

  /**
   * {@link #sample(Shard, String, long, String, int, Supplier, Integer, Long, SampleLimits)}, with
   * the row's extra fields given to the sample by {@code fields} (which sets each value, or the
   * sample's problem).
   */
  static Sample sample(
      Shard shard,
      String fileName,
      long row,
      String key,
      int imageBytes,
      Supplier<byte[]> pixels,
      Integer label,
      Long index,
      SampleLimits limits,
      java.util.function.Consumer<SampleBuilder> fields) {
    String at = " (row " + row + " of " + fileName + ")";
    SampleBuilder b =
        new SampleBuilder(shard.uri(), key != null ? key : fileName + "#" + row, row, limits);
    if (key == null) {
      b.problem("the key is null" + at);
    }
    if (limits.fields().hasImage()) { // an output without images has no image column
      storedImage(b, imageBytes, pixels, limits, row, at);
    }
    // a declaration without 'label' does not read the stored one (-100 in an output of samples
    // without labels): the sample gets the ignored label (SampleBuilder)
    if (limits.fields().labelled()) {
      if (label == null) {
        b.problem("the label is null" + at);
      } else {
        b.label(label, "label " + label + at);
      }
    }
    if (index == null) {
      b.problem("the index is null" + at);
    } else {
      b.stored(index);
    }
    fields.accept(b);
    return b.build();
  }

  private static void storedImage(
      SampleBuilder b,
      int imageBytes,
      Supplier<byte[]> pixels,
      SampleLimits limits,
      long row,
      String at) {
    if (imageBytes < 0) {
      b.problem("the image is null" + at);
    } else if (imageBytes > limits.maxSampleBytes()) {
      b.problem(
          String.format(
              "the stored image is %d bytes, over spark.spindle.maxSampleBytes=%d" + "%s",
              imageBytes, limits.maxSampleBytes(), at));
    } else {
      b.imageValue(pixels.get(), "the stored image of row " + row);
    }
  }

  /** A row that could not be read, with why ({@code damage} names the file's rows). */
  static Sample damaged(
      Shard shard, String fileName, long row, String damage, SampleLimits limits) {
    return new SampleBuilder(shard.uri(), fileName + "#" + row, row, limits)
        .problem(damage + " (" + fileName + ")")
        .build();
  }
}
