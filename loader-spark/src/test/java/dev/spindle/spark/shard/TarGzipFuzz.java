package dev.spindle.spark.shard;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.io.ByteArrayInputStream;
import java.io.IOException;

/**
 * Fuzz target of a gzip-compressed tar shard ({@code .tar.gz}): {@link DecompressedStream} under
 * the tar entry reader, as {@link TarFuzz} reads a plain one. A corrupt or truncated gzip stream
 * must end in {@link TarFormatException} like damaged tar bytes, never in a {@code ZipException} or
 * {@code EOFException} that would fail the task as a storage error.
 */
public final class TarGzipFuzz {
  private TarGzipFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("tar-gz", TarGzipFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) throws IOException {
    TarFuzz.walk(
        TarCompression.forShard(new ByteArrayInputStream(data), "fuzz.tar.gz"), "fuzz.tar.gz");
  }
}
