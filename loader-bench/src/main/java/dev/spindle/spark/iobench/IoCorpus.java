package dev.spindle.spark.iobench;

import dev.spindle.spark.example.SampleImages;
import dev.spindle.spark.shard.TarWriter;
import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code bench io}'s data set: WebDataset tar shards ({@code shard-00000.tar} holding {@code
 * 000000.jpg} + {@code 000000.cls}, …) of synthetic JPEGs the size of ImageNet's: 500×375 or
 * 375×500, a smooth pattern under pixel noise whose strength varies from image to image, so that
 * the files spread over about 50 to 110 KB (quality 90). The same arguments give the same bytes.
 * Shards are written by a pool of the machine's cores; the caller's thread waits.
 */
final class IoCorpus {
  private IoCorpus() {}

  /** Writes {@code shards} × {@code perShard} samples into {@code dir}; returns their bytes. */
  static long write(Path dir, int shards, int perShard) throws Exception {
    Files.createDirectories(dir);
    int threads = Math.max(1, Math.min(shards, Runtime.getRuntime().availableProcessors()));
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Long>> written = new ArrayList<>();
      for (int s = 0; s < shards; s++) {
        int shard = s;
        written.add(pool.submit(() -> writeShard(dir, shard, perShard)));
      }
      long bytes = 0;
      for (Future<Long> f : written) {
        bytes += f.get();
      }
      return bytes;
    } finally {
      pool.shutdownNow();
    }
  }

  private static long writeShard(Path dir, int shard, int perShard) throws IOException {
    Path file = dir.resolve(String.format("shard-%05d.tar", shard));
    Path temp = dir.resolve(String.format("_shard-%05d.tar.tmp", shard));
    try (OutputStream out = Files.newOutputStream(temp);
        TarWriter tar = new TarWriter(out)) {
      for (int i = 0; i < perShard; i++) {
        long index = (long) shard * perShard + i;
        String key = String.format("%06d", index);
        tar.add(key + ".jpg", jpeg(index));
        tar.add(key + ".cls", Long.toString(index % 10).getBytes(StandardCharsets.US_ASCII));
      }
    }
    Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return Files.size(file);
  }

  /** Image {@code index}: deterministic, about 50 to 110 KB. */
  static byte[] jpeg(long index) throws IOException {
    SplittableRandom rnd = new SplittableRandom(index * 7_919L + 1);
    boolean portrait = rnd.nextInt(4) == 0;
    int w = portrait ? 375 : 500;
    int h = portrait ? 500 : 375;
    int noise = 12 + rnd.nextInt(29); // the noise sets the size: 12 ≈ 50 KB, 40 ≈ 110 KB
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_3BYTE_BGR);
    byte[] px = ((DataBufferByte) image.getRaster().getDataBuffer()).getData();
    int[] base = {rnd.nextInt(256), rnd.nextInt(256), rnd.nextInt(256)};
    double fx = rnd.nextDouble() * 0.05;
    double fy = rnd.nextDouble() * 0.05;
    int i = 0;
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < w; x++) {
        double wave = Math.sin(x * fx + y * fy) * 60;
        for (int c = 0; c < 3; c++) {
          int v = (int) (base[c] * 0.6 + wave + (x * c) % 40) + rnd.nextInt(-noise, noise + 1);
          px[i++] = (byte) Math.max(0, Math.min(255, v));
        }
      }
    }
    return SampleImages.encode(image);
  }
}
