package dev.spindle.spark.shard;

import java.util.List;

/**
 * One sample read from a shard, before decoding: its encoded image, or for a row of a {@code
 * preprocess} output its stored pixels ({@link #stored()}), which are never decoded. Owned by
 * whoever received it from the reader; immutable apart from the image array, which must not be
 * modified.
 *
 * @param shard the shard it came from (for messages and quarantine records)
 * @param key the sample's key inside its shard (tar: the entry name up to the first dot of the file
 *     name, invalid UTF-8 bytes as {@code \xHH}; folders: {@code <class>/<file>}; Parquet: {@code
 *     <file name>#<row>}, the row counted from 0 over the file; a preprocess output's row: the key
 *     it was stored with, the original sample's; {@code (rest of shard)} for a tar's damage, {@code
 *     (unread #N)} for a planned sample that was not read)
 * @param position the sample's position inside its shard, counting every sample
 * @param image the encoded image bytes, or null when the sample has none
 * @param imageName the entry or file that held the image, for messages (Parquet: {@code image.bytes
 *     of row N})
 * @param imageFile the name of the file the image was (a tar entry's, an image folder file's path),
 *     or null when it was a value, not a file of its own (a Parquet row's, a preprocess output's
 *     pixels): the DataSource's {@code format} comes from its extension
 * @param label the class label, or null when the sample has none
 * @param problem why this sample cannot be used (no image, no label, a label outside the rule, too
 *     large, a repeated key, the shard's damage), or null
 * @param stored for a row of a {@code preprocess} output ({@link ShardFormat#DECODED_ARROW}, {@link
 *     ShardFormat#DECODED_PARQUET}): {@code image} holds its stored uint8 pixels (H·W·C, row-major
 *     HWC: already decoded and transformed), and this is what else the row stored; null for an
 *     encoded sample
 * @param fields the values of the job's extra fields ({@link
 *     dev.spindle.spark.batch.FieldSet#extras()}), in declaration order, each as its type holds it
 *     ({@link FieldValues}); empty without extra fields, or when the sample has a problem
 */
public record Sample(
    String shard,
    String key,
    long position,
    byte[] image,
    String imageName,
    String imageFile,
    Integer label,
    String problem,
    Stored stored,
    List<Object> fields) {

  public Sample {
    fields = fields == null ? List.of() : fields;
  }

  /** A sample without extra fields. */
  public Sample(
      String shard,
      String key,
      long position,
      byte[] image,
      String imageName,
      String imageFile,
      Integer label,
      String problem,
      Stored stored) {
    this(shard, key, position, image, imageName, imageFile, label, problem, stored, List.of());
  }

  /**
   * What a row of a {@code preprocess} output stored besides its pixels and label.
   *
   * @param index its {@code index} column: the sample's dataset index in the input {@code
   *     preprocess} read
   */
  public record Stored(long index) {}

  /** An encoded sample whose image, if any, was the file {@code imageName}. */
  public Sample(
      String shard,
      String key,
      long position,
      byte[] image,
      String imageName,
      Integer label,
      String problem) {
    this(shard, key, position, image, imageName, imageName, label, problem, null);
  }

  /**
   * Bytes its extra field values hold (a string's UTF-16 length twice, an array's elements), for
   * the byte bounds of the queues it waits in; 0 without extra fields.
   */
  public long fieldBytes() {
    long n = 0;
    for (Object v : fields) {
      if (v instanceof String s) {
        n += 2L * s.length();
      } else if (v instanceof byte[] b) {
        n += b.length;
      } else if (v instanceof int[] a) {
        n += 4L * a.length;
      } else if (v instanceof long[] a) {
        n += 8L * a.length;
      } else if (v instanceof float[] a) {
        n += 4L * a.length;
      } else {
        n += 8; // a number
      }
    }
    return n;
  }

  /**
   * This sample without its encoded bytes ({@link #image} null), everything else the same: what a
   * row keeps once its pixels were written into its batch, so that the bytes can go before the
   * batch is complete.
   */
  public Sample withoutImage() {
    return image == null
        ? this
        : new Sample(
            shard, key, position, null, imageName, imageFile, label, problem, stored, fields);
  }

  /** True when the sample can go on to decoding. */
  public boolean usable() {
    return problem == null;
  }

  /**
   * A planned sample its shard did not yield (the shard is shorter or damaged before it): listed as
   * quarantined, never dropped. Its key is unknown: {@code (unread #POSITION)}.
   *
   * @param damage the shard's {@link ShardReader#damage()}, or null when it simply ended
   */
  public static Sample unread(Shard shard, long position, String damage) {
    String reason =
        damage != null
            ? "not read: the shard is damaged before it: " + damage
            : "the shard ended before sample "
                + position
                + " (the manifest counted "
                + shard.samples()
                + "); did it change since it was counted?";
    String key = "(unread #" + position + ")";
    return new Sample(shard.uri(), key, position, null, null, null, reason);
  }
}
