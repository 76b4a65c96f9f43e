package dev.spindle.spark.shard;

/**
 * Collects the parts of one sample and names what is missing or wrong; the first problem found is
 * the one reported. The first image entry is the image (other image extensions are further views,
 * not read), the first label entry the label. One thread.
 */
final class SampleBuilder {
  private final String shard;
  private final String key;
  private final long position;
  private final SampleLimits limits;
  private byte[] image;
  private String imageName;
  private Integer label;
  private String problem;

  SampleBuilder(String shard, String key, long position, SampleLimits limits) {
    this.shard = shard;
    this.key = key;
    this.position = position;
    this.limits = limits;
  }

  /** True while the sample has no image and no problem: an image entry is worth reading. */
  boolean wantsImage() {
    return image == null && problem == null;
  }

  /** True while the sample has no label and no problem: a label entry is worth reading. */
  boolean wantsLabel() {
    return label == null && problem == null;
  }

  SampleBuilder image(byte[] bytes, String name) {
    image = bytes;
    imageName = name;
    return this;
  }

  /** A label known as a number, e.g. an image folder's class index ({@code what} names it). */
  SampleBuilder label(long value, String what) {
    String wrong = LabelRule.problem(value, limits);
    if (wrong != null) {
      problem(what + " " + wrong);
    } else {
      label = (int) value;
    }
    return this;
  }

  /** A label entry's bytes, by {@link LabelRule}. */
  SampleBuilder labelText(byte[] text, String entryName) {
    String value = LabelRule.text(text);
    if (value.isEmpty()) {
      return problem("label entry " + entryName + " is empty");
    }
    String what = "label '" + LabelRule.abbreviate(value) + "' in " + entryName;
    long number = LabelRule.parse(value);
    return number < 0 ? problem(what + " " + LabelRule.NOT_PLAIN) : label(number, what);
  }

  SampleBuilder problem(String reason) {
    if (problem == null) {
      problem = reason;
    }
    return this;
  }

  Sample build() {
    if (problem == null && image == null) {
      problem = "no image entry (.jpg, .jpeg or .png) for key " + key;
    }
    if (problem == null && label == null) {
      problem = "no label entry (.cls) for key " + key;
    }
    return new Sample(shard, key, position, image, imageName, label, problem);
  }
}
