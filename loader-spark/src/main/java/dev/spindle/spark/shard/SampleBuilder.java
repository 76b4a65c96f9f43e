package dev.spindle.spark.shard;

/** Collects the parts of one sample and names what is missing or wrong. */
final class SampleBuilder {
  private final String shard;
  private final String key;
  private final long position;
  private byte[] image;
  private String imageName;
  private Integer label;
  private String problem;

  SampleBuilder(String shard, String key, long position) {
    this.shard = shard;
    this.key = key;
    this.position = position;
  }

  SampleBuilder image(byte[] bytes, String name) {
    if (image == null) { // the first image entry of a sample wins; others are extra views
      image = bytes;
      imageName = name;
    }
    return this;
  }

  SampleBuilder label(int value) {
    label = value;
    return this;
  }

  SampleBuilder labelText(String text, String entryName) {
    try {
      label = Integer.parseInt(text);
    } catch (NumberFormatException e) {
      problem("label '" + abbreviate(text) + "' in " + entryName + " is not an integer");
    }
    return this;
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

  private static String abbreviate(String text) {
    return text.length() <= 40 ? text : text.substring(0, 40) + "…";
  }
}
