package dev.spindle.spark.shard;

/**
 * One encoded sample read from a shard, before decoding. Owned by whoever received it from the
 * reader; immutable apart from the image array, which must not be modified.
 *
 * @param shard the shard it came from (for messages and quarantine records)
 * @param key the sample's key inside its shard (tar: the entry name up to the first dot of the file
 *     name; folders: {@code <class>/<file>})
 * @param position the sample's position inside its shard, counting every sample
 * @param image the encoded image bytes, or null when the sample has none
 * @param imageName the entry or file that held the image (its extension names the format)
 * @param label the class label, or null when the sample has none
 * @param problem why this sample cannot be used (no image, no label, unparsable label), or null
 */
public record Sample(
    String shard,
    String key,
    long position,
    byte[] image,
    String imageName,
    Integer label,
    String problem) {

  /** True when the sample can go on to decoding. */
  public boolean usable() {
    return problem == null;
  }
}
