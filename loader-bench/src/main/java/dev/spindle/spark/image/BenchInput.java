package dev.spindle.spark.image;

import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The samples of a benchmark input: image files under a directory (recursively, sorted) and the
 * image members of WebDataset-style {@code .tar} shards there. Immutable once listed; {@link
 * Sample#read} may be called from any thread.
 */
final class BenchInput {
  private BenchInput() {}

  /** One encoded image: {@code length} bytes at {@code offset} of {@code file}. */
  record Sample(Path file, long offset, int length, String key) {
    /**
     * The sample's bytes: one open, seek and read of the listed length, for a whole file as for a
     * tar member (no size lookup per read); a file that shrank since listing fails with an {@link
     * EOFException} naming the sample.
     */
    byte[] read() throws IOException {
      try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
        byte[] b = new byte[length];
        f.seek(offset);
        f.readFully(b);
        return b;
      } catch (EOFException e) {
        throw new EOFException(
            "Invalid sample "
                + key
                + ": "
                + file
                + " ends before byte "
                + (offset + length)
                + " (changed since it was listed?)");
      }
    }
  }

  static List<Sample> list(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("Invalid input: " + dir + " (not a directory)");
    }
    List<Sample> samples = new ArrayList<>();
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.filter(Files::isRegularFile).sorted().toList()) {
        String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
        if (isImage(name)) {
          samples.add(new Sample(p, 0, (int) Files.size(p), dir.relativize(p).toString()));
        } else if (name.endsWith(".tar")) {
          samples.addAll(tarMembers(p));
        }
      }
    }
    if (samples.isEmpty()) {
      throw new IllegalArgumentException("Invalid input: " + dir + " (no .jpg, .png or .tar)");
    }
    return samples;
  }

  /** Whether a sample's key (a file or member name) names a JPEG. */
  static boolean isJpeg(String key) {
    String name = key.toLowerCase(Locale.ROOT);
    return name.endsWith(".jpg") || name.endsWith(".jpeg");
  }

  private static boolean isImage(String name) {
    return isJpeg(name) || name.endsWith(".png");
  }

  /** Image members of a POSIX/GNU tar (ustar headers, 512-byte blocks). */
  private static List<Sample> tarMembers(Path tar) throws IOException {
    List<Sample> out = new ArrayList<>();
    try (RandomAccessFile f = new RandomAccessFile(tar.toFile(), "r")) {
      byte[] header = new byte[512];
      long pos = 0;
      while (pos + 512 <= f.length()) {
        f.seek(pos);
        f.readFully(header);
        if (header[0] == 0) {
          break;
        }
        String name = new String(header, 0, 100, StandardCharsets.US_ASCII).split("\0", 2)[0];
        long size =
            Long.parseLong(
                new String(header, 124, 12, StandardCharsets.US_ASCII).trim().replace("\0", ""), 8);
        char type = (char) header[156];
        if ((type == '0' || type == 0) && isImage(name.toLowerCase(Locale.ROOT))) {
          out.add(new Sample(tar, pos + 512, (int) size, tar.getFileName() + "/" + name));
        }
        pos += 512 + (size + 511) / 512 * 512;
      }
    }
    return out;
  }
}
