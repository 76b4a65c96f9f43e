package dev.spindle.spark.example;

import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.shard.TarWriter;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * {@code import-fashion-mnist}: turns Debian's {@code dataset-fashion-mnist} IDX files into
 * WebDataset tar shards ({@code train-NNNNN.png} + {@code .cls}) that every Spindle job reads. A
 * Spark job, one task per shard: each task reads its range of the IDX files (present on every node:
 * a Debian package), encodes 28x28 grayscale PNGs and writes its shard to a temporary name, renamed
 * when complete, so a retried task never leaves a partial shard. Driver: main thread.
 */
public final class FashionMnistImport {
  /** Where Debian's package puts the files. */
  public static final java.nio.file.Path DEBIAN_DIR =
      java.nio.file.Path.of("/usr/share/datasets/fashion-mnist");

  private FashionMnistImport() {}

  /**
   * Imports the first {@code limit} samples of {@code split} ("train" or "t10k") from {@code
   * source} into {@code shards} shards under {@code output}.
   */
  public static JobReport run(
      SparkSession spark,
      java.nio.file.Path source,
      String split,
      String output,
      int limit,
      int shards)
      throws IOException {
    java.nio.file.Path images = source.resolve(split + "-images-idx3-ubyte.gz");
    java.nio.file.Path labels = source.resolve(split + "-labels-idx1-ubyte.gz");
    if (!java.nio.file.Files.isReadable(images) || !java.nio.file.Files.isReadable(labels)) {
      throw new IllegalArgumentException(
          "Fashion-MNIST files not found in "
              + source
              + " (install Debian's dataset-fashion-mnist, or pass --source DIR)");
    }
    int available = IdxFiles.count(images);
    int n = limit <= 0 ? available : Math.min(limit, available);
    if (shards < 1 || shards > n) {
      throw new IllegalArgumentException("Invalid shards: " + shards + " (must be 1.." + n + ")");
    }
    List<int[]> ranges = new ArrayList<>();
    for (int s = 0; s < shards; s++) {
      ranges.add(new int[] {s, (int) ((long) s * n / shards), (int) ((long) (s + 1) * n / shards)});
    }
    String img = images.toString();
    String lab = labels.toString();
    long start = System.nanoTime();
    List<Long> bytes =
        new JavaSparkContext(spark.sparkContext())
            .parallelize(ranges, shards)
            .map(r -> writeShard(img, lab, split, output, r[0], r[1], r[2]))
            .collect();
    double wall = (System.nanoTime() - start) / 1e9;
    return new JobReport("import-fashion-mnist")
        .put("source", source.toString())
        .put("output", output)
        .put("split", split)
        .put("samples", n)
        .put("shards", shards)
        .put("bytes_out", bytes.stream().mapToLong(Long::longValue).sum())
        .put("wall_s", wall);
  }

  private static long writeShard(
      String images, String labels, String split, String output, int shard, int from, int to)
      throws IOException {
    IdxFiles.Images im = IdxFiles.images(java.nio.file.Path.of(images), from, to - from);
    byte[] lab = IdxFiles.labels(java.nio.file.Path.of(labels), from, to - from);
    Path out = new Path(output);
    FileSystem fs = out.getFileSystem(new Configuration());
    fs.mkdirs(out);
    Path file = new Path(out, String.format("%s-%05d.tar", split, shard));
    Path temp = new Path(out, String.format("_%s-%05d.tar.tmp", split, shard));
    try (TarWriter tar = new TarWriter(fs.create(temp, true))) {
      for (int i = 0; i < lab.length; i++) {
        String key = String.format("%s-%05d", split, from + i);
        tar.add(key + ".png", png(im.pixels()[i], im.rows(), im.cols()));
        tar.add(key + ".cls", Integer.toString(lab[i]).getBytes(StandardCharsets.US_ASCII));
      }
    }
    fs.delete(file, false);
    if (!fs.rename(temp, file)) {
      throw new IOException("Could not rename " + temp + " to " + file);
    }
    return fs.getFileStatus(file).getLen();
  }

  /** A grayscale PNG of {@code pixels} (row-major uint8). */
  static byte[] png(byte[] pixels, int rows, int cols) {
    BufferedImage image = new BufferedImage(cols, rows, BufferedImage.TYPE_BYTE_GRAY);
    image.getRaster().setDataElements(0, 0, cols, rows, pixels);
    ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
    try {
      ImageIO.write(image, "png", out);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot encode a PNG", e);
    }
    return out.toByteArray();
  }
}
