package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.util.ArrayList;
import java.util.List;

/**
 * The columns of a binary manifest ({@link ManifestBinary}; layout in the package documentation):
 * every shard's path front-coded against the one before ({@link FrontCodedNames}), then its format,
 * size, modification time (as a difference from the shard before), sample count and entry count,
 * each a column of varints, then the folder entries. Consecutive shard names share most of their
 * bytes and their numbers are alike, which is what makes the columns small and compressible.
 * Stateless; any thread.
 */
final class ManifestColumns {
  private static final ShardFormat[] FORMATS = {
    null, ShardFormat.TAR, ShardFormat.IMAGE_FOLDER, ShardFormat.PARQUET
  };

  private ManifestColumns() {}

  /**
   * @throws IllegalArgumentException for a manifest the JSON form refuses too
   */
  static byte[] encode(Manifest m) {
    List<Shard> shards = m.shards();
    ParquetColumns columns = ManifestCodec.columnsOf(m);
    BinaryOut out = new BinaryOut(64 + shards.size() * 16);
    out.writeString(m.input());
    out.writeVarint(m.classNames().size());
    m.classNames().forEach(out::writeString);
    out.writeByte(columns == null ? 0 : 1);
    if (columns != null) {
      out.writeString(absentAsEmpty(columns.image()));
      out.writeString(absentAsEmpty(columns.label()));
    }
    out.writeVarint(shards.size());
    FrontCodedNames paths = new FrontCodedNames();
    shards.forEach(s -> paths.write(out, ManifestCodec.pathOf(m, s)));
    shards.forEach(s -> out.writeByte(code(s.format())));
    shards.forEach(s -> out.writeZigZag(s.bytes()));
    long time = 0;
    for (Shard s : shards) {
      out.writeZigZag(s.modificationTime() - time);
      time = s.modificationTime();
    }
    shards.forEach(s -> out.writeVarint(s.samples()));
    shards.forEach(s -> out.writeVarint(s.entries().size()));
    FrontCodedNames entries = new FrontCodedNames();
    for (Shard s : shards) {
      for (FolderEntry e : s.entries()) {
        entries.write(out, e.path());
        out.writeZigZag(e.label());
      }
    }
    return out.toByteArray();
  }

  /** Reads what {@link #encode} wrote; refuses anything else with the reason. */
  static Manifest decode(byte[] body) {
    BinaryIn in = new BinaryIn(body, 0, body.length);
    String input = in.readString("the input");
    int names = in.readCount("the class name count", in.remaining());
    List<String> classNames = new ArrayList<>(names);
    for (int i = 0; i < names; i++) {
      classNames.add(in.readString("a class name"));
    }
    ParquetColumns columns =
        switch (in.readByte("the Parquet columns' flag")) {
          case 0 -> null;
          case 1 ->
              new ParquetColumns(
                  emptyAsAbsent(in.readString("the image column")),
                  emptyAsAbsent(in.readString("the label column")));
          default -> throw BinaryIn.invalid("the Parquet columns' flag is neither 0 nor 1");
        };
    // every shard takes at least 2 bytes of paths and 1 of each other column
    int n = in.readCount("the shard count", in.remaining() / 7);
    return new Manifest(input, shards(in, uris(in, n, input), columns), classNames);
  }

  /**
   * The shards' URIs: each path read after its base (as {@link Manifest#resolve} joins them) and
   * decoded once, with the base.
   */
  private static String[] uris(BinaryIn in, int n, String input) {
    String base = new Manifest(input, List.of(), List.of()).base();
    FrontCodedNames paths =
        new FrontCodedNames(Wtf8.encode(base.endsWith("/") ? base : base + "/"));
    String[] uris = new String[n];
    for (int i = 0; i < n; i++) {
      paths.read(in, "a shard path");
      uris[i] = paths.isEmpty() ? base : paths.withPrefix();
    }
    return uris;
  }

  private static List<Shard> shards(BinaryIn in, String[] uris, ParquetColumns columns) {
    int n = uris.length;
    ShardFormat[] formats = new ShardFormat[n];
    for (int i = 0; i < n; i++) {
      formats[i] = format(in.readByte("the formats"), uris[i], columns);
    }
    long[] bytes = new long[n];
    for (int i = 0; i < n; i++) {
      bytes[i] = in.readZigZag("the sizes");
    }
    long[] times = new long[n];
    long time = 0;
    for (int i = 0; i < n; i++) {
      time = times[i] = time + in.readZigZag("the modification times");
    }
    long[] samples = new long[n];
    for (int i = 0; i < n; i++) {
      samples[i] = in.readVarint("the sample counts");
    }
    int[] entries = new int[n];
    long total = 0;
    for (int i = 0; i < n; i++) {
      total += entries[i] = in.readCount("an entry count", in.remaining() / 3);
    }
    if (total > in.remaining() / 3) { // each entry takes at least 3 bytes
      throw BinaryIn.invalid(total + " folder entries in " + in.remaining() + " bytes");
    }
    List<Shard> shards = new ArrayList<>(n);
    FrontCodedNames paths = new FrontCodedNames();
    for (int i = 0; i < n; i++) {
      List<FolderEntry> files = entries[i] == 0 ? List.of() : new ArrayList<>(entries[i]);
      for (int j = 0; j < entries[i]; j++) {
        paths.read(in, "a folder entry's path");
        files.add(new FolderEntry(paths.name(), label(in.readZigZag("a label"), uris[i])));
      }
      shards.add(
          new Shard(
              uris[i],
              formats[i],
              bytes[i],
              times[i],
              samples[i],
              files,
              formats[i] == ShardFormat.PARQUET ? columns : null));
    }
    if (in.remaining() != 0) {
      throw BinaryIn.invalid(in.remaining() + " bytes after the last column");
    }
    return shards;
  }

  private static int code(ShardFormat format) {
    for (int c = 1; c < FORMATS.length; c++) {
      if (FORMATS[c] == format) {
        return c;
      }
    }
    throw new IllegalStateException("No binary code for " + format); // pathOf refused it before
  }

  private static ShardFormat format(int code, String path, ParquetColumns columns) {
    if (code < 1 || code >= FORMATS.length) {
      throw BinaryIn.invalid(
          "shard " + path + " has format code " + code + " (1 TAR, 2 IMAGE_FOLDER, 3 PARQUET)");
    }
    if (FORMATS[code] == ShardFormat.PARQUET && columns == null) {
      throw BinaryIn.invalid("Parquet shard " + path + " but no Parquet columns");
    }
    return FORMATS[code];
  }

  private static int label(long label, String path) {
    if (label != (int) label) {
      throw BinaryIn.invalid("an entry of " + path + " has label " + label);
    }
    return (int) label;
  }

  /**
   * A column a job does not read (no {@code image} or {@code label} field declared) is written as
   * "" (no column name is empty), so a manifest with both columns keeps its bytes.
   */
  private static String absentAsEmpty(String column) {
    return column == null ? "" : column;
  }

  private static String emptyAsAbsent(String column) {
    return column.isEmpty() ? null : column;
  }
}
