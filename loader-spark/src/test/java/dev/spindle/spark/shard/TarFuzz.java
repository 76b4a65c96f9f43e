package dev.spindle.spark.shard;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Fuzz target (Jazzer; see {@code dev.spindle.spark.fuzz}) of the tar entry reader: the input is a
 * shard's bytes, plain tar (ustar, GNU long names, pax records, base-256 sizes). The property: the
 * reader walks it to the end or stops with {@link TarFormatException}, its documented refusal; it
 * reads an entry's content only when the entry is within the sample limit, as {@link
 * TarSampleCursor}'s callers do, so it allocates no more than that limit or {@code 1 MiB} of pax or
 * long-name records. Anything else thrown is a finding.
 */
public final class TarFuzz {
  /**
   * The sample limit the target reads content under (the callers' spark.spindle.maxSampleBytes).
   */
  static final int MAX_CONTENT = 1 << 20;

  private TarFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("tar", TarFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) throws IOException {
    walk(new ByteArrayInputStream(data), "fuzz.tar");
  }

  /**
   * Reads every entry of {@code in}; returns normally at the end or on the shard's damage. Closes
   * {@code in} as the shard readers do: a decompressor's native memory is freed there.
   */
  static void walk(InputStream in, String shard) throws IOException {
    try (in) {
      TarEntryReader entries = new TarEntryReader(in, shard);
      while (entries.next()) {
        if (entries.name().isEmpty() && entries.rawName().length != 0) {
          throw new IllegalStateException("name lost: " + entries.rawName().length + " bytes");
        }
        WebDatasetKeys.key(entries.rawName());
        WebDatasetKeys.extension(entries.rawName());
        long size = entries.size();
        if (size < 0 || size > TarEntryReader.MAX_ENTRY_BYTES) {
          throw new IllegalStateException("entry size out of range: " + size);
        }
        if (size <= MAX_CONTENT && entries.readContent().length != size) {
          throw new IllegalStateException("content is not " + size + " bytes");
        }
      }
    } catch (TarFormatException e) {
      // the documented refusal: the shard is damaged from here
    }
  }
}
