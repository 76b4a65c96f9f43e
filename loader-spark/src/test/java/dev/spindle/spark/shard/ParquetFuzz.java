package dev.spindle.spark.shard;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.io.IOException;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.ParquetReadOptions;

/**
 * Fuzz target of the Parquet shard path: the input is a Parquet file's bytes, read as a shard is
 * (the footer when counting, {@link ParquetFiles#countRows}, and when opening, {@link
 * ParquetFiles#open}; then {@link ParquetShardReader} reads every row), from memory ({@link
 * BytesInputFile}: Hadoop's local file system in between made it 50 times slower, and adds no
 * parsing). The property: counting and opening return or throw {@link ShardRefusedException} (the
 * documented refusal of a file that is not Parquet, is truncated or corrupt, or lacks usable
 * columns); reading turns damaged row groups into samples with a problem and throws nothing (from
 * memory there is no storage to fail, so no UncheckedIOException); image bytes over the sample
 * limit are never copied; no page over {@link PageSizeLimit}'s bound is decompressed (the JVM's
 * heap holds two pages at that bound, one per column, and no more); no column chunk or page is
 * allocated at a size its footer or page header declares past the file's end ({@link
 * ParquetFiles#checkChunks}, {@link PageHeaderCheck}; the heap holds them to that); reading takes
 * time in proportion to the file, a footer claiming no more rows than the file has bytes (each
 * claimed row is a sample; the time bound holds them to that). One thread.
 */
public final class ParquetFuzz {
  private static final String NAME = "file:/fuzz/fuzz.parquet";
  private static final SampleLimits LIMITS = new SampleLimits(1 << 16, 0);

  /** The options a shard is read with (checksums verified, pages bounded: PageSizeLimit). */
  private static final ParquetReadOptions OPTIONS =
      ParquetFiles.options(new Configuration(), new Path(NAME), LIMITS);

  private ParquetFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("parquet", ParquetFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) throws IOException {
    BytesInputFile file = new BytesInputFile(data);
    long rows;
    try {
      rows =
          ParquetFiles.countRows(
              ParquetFiles.open(file, OPTIONS, NAME), ParquetColumns.DEFAULT, NAME);
    } catch (ShardRefusedException e) {
      return;
    }
    Shard shard =
        new Shard(
            NAME, ShardFormat.PARQUET, data.length, 0, rows, List.of(), ParquetColumns.DEFAULT);
    try (ParquetShardReader reader =
        ParquetShardReader.open(shard, ParquetFiles.open(file, OPTIONS, NAME), LIMITS, null)) {
      long n = 0;
      while (reader.hasNext()) {
        Sample s = reader.next();
        if (s.position() != n++) {
          throw new IllegalStateException(
              "sample " + s.position() + " where " + (n - 1) + " was due");
        }
        if (s.image() != null && s.image().length > LIMITS.maxSampleBytes()) {
          throw new IllegalStateException("an image of " + s.image().length + " bytes was copied");
        }
      }
      if (n != rows) {
        throw new IllegalStateException(n + " samples read, " + rows + " counted");
      }
    } catch (ShardRefusedException e) {
      // documented: the footer refused (an UncheckedIOException, a storage error, cannot come
      // from bytes in memory: it would be damage misread as storage, a finding)
    }
  }
}
