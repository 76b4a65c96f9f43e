package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.apache.commons.compress.compressors.zstandard.ZstdCompressorInputStream;

/**
 * How a tar shard is compressed, by its name: {@code .tar}, gzip ({@code .tar.gz}, {@code .tgz}),
 * xz ({@code .tar.xz}, {@code .txz}), bzip2 ({@code .tar.bz2}, {@code .tbz2}, {@code .tbz}) or
 * Zstandard ({@code .tar.zst}, {@code .tzst}). gzip is the JDK's; xz, bzip2 and Zstandard are
 * Apache Commons Compress's (with tukaani xz and zstd-jni, all three on Spark's own classpath).
 * Concatenated streams (several gzip members, xz streams, bzip2 streams as pbzip2 writes them,
 * Zstandard frames) read as one, as their command-line tools do. A compressed tar's bytes reach
 * {@link TarSampleCursor} through {@link DecompressedStream}, which makes a damaged stream the
 * shard's damage. Stateless; any thread.
 */
public enum TarCompression {
  NONE("tar", List.of(".tar")),
  GZIP("gzip", List.of(".tar.gz", ".tgz")),
  XZ("xz", List.of(".tar.xz", ".txz")),
  BZIP2("bzip2", List.of(".tar.bz2", ".tbz2", ".tbz")),
  ZSTD("zstd", List.of(".tar.zst", ".tzst"));

  /**
   * The most an xz stream's dictionary may take (KiB): {@code xz -9} needs 64 MiB; a header
   * declaring more is damage ({@code MemoryLimitException}), not an allocation.
   */
  static final int XZ_MEMORY_LIMIT_KB = 96 * 1024;

  private static final int GZIP_BUFFER = 1 << 16;

  private final String codec;
  private final List<String> suffixes;

  TarCompression(String codec, List<String> suffixes) {
    this.codec = codec;
    this.suffixes = suffixes;
  }

  /** The compression of a tar shard of this name, or null when the name is not a tar shard's. */
  static TarCompression of(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    for (TarCompression c : values()) {
      for (String suffix : c.suffixes) {
        if (lower.endsWith(suffix)) {
          return c;
        }
      }
    }
    return null;
  }

  /**
   * Names of tars compressed in ways not read here: such a file is refused by name, never passed
   * over as a file that is no shard.
   */
  private static final List<String> UNREAD =
      List.of(
          ".tar.lz4",
          ".tar.lz",
          ".tar.lzma",
          ".tar.lzo",
          ".tar.z",
          ".tar.br",
          ".tar.sz",
          ".tlz",
          ".taz");

  /** True for the name of a tar compressed in a way Spindle does not read ({@code .tar.lz4}). */
  static boolean isUnreadableTar(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    return UNREAD.stream().anyMatch(lower::endsWith);
  }

  /** Every name suffix of a readable tar shard, for messages. */
  public static String suffixList() {
    StringBuilder s = new StringBuilder();
    for (TarCompression c : values()) {
      for (String suffix : c.suffixes) {
        s.append(s.isEmpty() ? "" : ", ").append(suffix);
      }
    }
    return s.toString();
  }

  /** The name of the compression in messages ("gzip", "xz"). */
  String codec() {
    return codec;
  }

  /** True for a tar shard compressed as its name says: no random access, so no member index. */
  static boolean compressed(String uri) {
    TarCompression c = of(uri);
    return c != null && c != NONE;
  }

  /** {@code raw} itself for a plain tar, its decompressed bytes for a compressed one. */
  static InputStream forShard(InputStream raw, String uri) {
    TarCompression c = of(uri);
    return c == null || c == NONE ? raw : new DecompressedStream(raw, uri, c);
  }

  /** The decompressor over {@code in}; reads the stream's header, so it may throw. */
  InputStream decompressor(InputStream in) throws IOException {
    return switch (this) {
      case NONE -> in;
      case GZIP -> new GZIPInputStream(in, GZIP_BUFFER);
      case XZ ->
          XZCompressorInputStream.builder()
              .setInputStream(in)
              .setDecompressConcatenated(true)
              .setMemoryLimitKiB(XZ_MEMORY_LIMIT_KB)
              .get();
      case BZIP2 -> new BZip2CompressorInputStream(in, true);
      case ZSTD -> new ZstdCompressorInputStream(in);
    };
  }
}
