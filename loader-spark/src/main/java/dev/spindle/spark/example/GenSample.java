package dev.spindle.spark.example;

import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.shard.TarWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * {@code gen-sample}: writes a deterministic synthetic dataset as WebDataset tar shards ({@code
 * shard-00000.tar} holding {@code sample-000000.jpg} + {@code sample-000000.cls}, …). Shards are
 * written by a small thread pool; each shard's bytes depend only on the options. Used by the {@code
 * gen-sample} and {@code demo} commands, tests and notebooks.
 */
public final class GenSample {
  /**
   * What to generate.
   *
   * @throws IllegalArgumentException naming the flag and value when a count is not positive or the
   *     image size is outside 8 pixels a side to 64 Mpixel
   */
  public record Options(String output, int shards, int perShard, int width, int height, long seed) {
    public Options {
      if (shards <= 0 || perShard <= 0) {
        throw new IllegalArgumentException(
            "Invalid --shards/--per-shard: " + shards + "/" + perShard + " (must be > 0)");
      }
      if (width < 8 || height < 8 || (long) width * height > 64_000_000L) {
        throw new IllegalArgumentException(
            "Invalid --width/--height: "
                + width
                + "x"
                + height
                + " (must be 8 or more a side,"
                + " at most 64 Mpixel)");
      }
    }
  }

  private GenSample() {}

  /** Writes the dataset on the calling thread (plus a small pool); returns its report. */
  public static JobReport run(Options o, Configuration conf) throws Exception {
    long start = System.nanoTime();
    Path out = new Path(o.output());
    FileSystem fs = out.getFileSystem(conf);
    fs.mkdirs(out);
    int threads = Math.max(1, Math.min(o.shards(), Runtime.getRuntime().availableProcessors()));
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long bytes = 0;
    try {
      List<Future<Long>> written = new ArrayList<>();
      for (int s = 0; s < o.shards(); s++) {
        int shard = s;
        written.add(pool.submit(() -> writeShard(fs, out, shard, o)));
      }
      for (Future<Long> f : written) {
        bytes += f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    double wall = (System.nanoTime() - start) / 1e9;
    long images = (long) o.shards() * o.perShard();
    return new JobReport("gen-sample")
        .put("output", fs.makeQualified(out).toString())
        .put("shards", o.shards())
        .put("images", images)
        .put("bytes_out", bytes)
        .put("wall_s", wall)
        .put("images_per_s", images / wall);
  }

  private static long writeShard(FileSystem fs, Path out, int shard, Options o) throws IOException {
    Path file = new Path(out, String.format("shard-%05d.tar", shard));
    Path temp = new Path(out, String.format("_shard-%05d.tar.tmp", shard));
    try (TarWriter tar = new TarWriter(fs.create(temp, true))) {
      for (int i = 0; i < o.perShard(); i++) {
        long index = (long) shard * o.perShard() + i;
        String key = String.format("sample-%06d", index);
        tar.add(key + ".jpg", SampleImages.jpeg(o.seed(), index, o.width(), o.height()));
        tar.add(
            key + ".cls",
            Integer.toString(SampleImages.label(o.seed(), index))
                .getBytes(StandardCharsets.US_ASCII));
      }
    }
    fs.delete(file, false);
    if (!fs.rename(temp, file)) {
      throw new IOException("Could not rename " + temp + " to " + file);
    }
    return fs.getFileStatus(file).getLen();
  }
}
