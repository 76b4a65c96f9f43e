package dev.spindle.spark.shard;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.io.ByteArrayInputStream;
import java.io.IOException;

/**
 * Fuzz target of a Zstandard-compressed tar shard ({@code .tar.zst}): Commons Compress over
 * zstd-jni's native decoder in {@link DecompressedStream} under the tar entry reader, as {@link
 * TarGzipFuzz} reads a gzip one. A corrupt, truncated or hostile stream must end in {@link
 * TarFormatException} like damaged tar bytes, never in another exception (one that fails the task
 * as a storage error), an allocation past the target's heap or a crash.
 */
public final class TarZstdFuzz {
  private TarZstdFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("tar-zst", TarZstdFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) throws IOException {
    TarFuzz.walk(
        TarCompression.forShard(new ByteArrayInputStream(data), "fuzz.tar.zst"), "fuzz.tar.zst");
  }
}
