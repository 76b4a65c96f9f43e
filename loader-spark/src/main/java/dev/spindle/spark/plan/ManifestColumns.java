package dev.spindle.spark.plan;

import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.Manifest;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.util.ArrayList;
import java.util.List;

/**
 * The columns of a binary manifest ({@link ManifestBinary}; layout in the package documentation):
 * every shard's path front-coded against the one before, then its format, size, modification
 * time (as a difference from the shard before), sample count and entry count, each a column of
 * varints, then the folder entries. Consecutive shard names share most of their text and their
 * numbers are alike, which is what makes the columns small and compressible. Stateless; any
 * thread.
 */
final class ManifestColumns {
  private static final ShardFormat[] FORMATS = {
      null, ShardFormat.TAR, ShardFormat.IMAGE_FOLDER, ShardFormat.PARQUET};

  private ManifestColumns() {}

  /** @throws IllegalArgumentException for a manifest the JSON form refuses too */
  static byte[] encode(Manifest m) {
    List<Shard> shards = m.shards();
    ParquetColumns columns = ManifestCodec.columnsOf(m);
    BinaryOut out = new BinaryOut(64 + shards.size() * 16);
    out.writeString(m.input());
    out.writeVarint(m.classNames().size());
    m.classNames().forEach(out::writeString);
    out.writeByte(columns == null ? 0 : 1);
    if (columns != null) {
      out.writeString(columns.image());
      out.writeString(columns.label());
    }
    out.writeVarint(shards.size());
    String previous = "";
    for (Shard s : shards) {
      previous = frontCoded(out, previous, ManifestCodec.pathOf(m, s));
    }
    shards.forEach(s -> out.writeByte(code(s.format())));
    shards.forEach(s -> out.writeZigZag(s.bytes()));
    long time = 0;
    for (Shard s : shards) {
      out.writeZigZag(s.modificationTime() - time);
      time = s.modificationTime();
    }
    shards.forEach(s -> out.writeVarint(s.samples()));
    shards.forEach(s -> out.writeVarint(s.entries().size()));
    previous = "";
    for (Shard s : shards) {
      for (FolderEntry e : s.entries()) {
        previous = frontCoded(out, previous, e.path());
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
    ParquetColumns columns = switch (in.readByte("the Parquet columns' flag")) {
      case 0 -> null;
      case 1 -> new ParquetColumns(in.readString("the image column"),
          in.readString("the label column"));
      default -> throw BinaryIn.invalid("the Parquet columns' flag is neither 0 nor 1");
    };
    // every shard takes at least 2 bytes of paths and 1 of each other column
    int n = in.readCount("the shard count", in.remaining() / 7);
    String[] paths = new String[n];
    String previous = "";
    for (int i = 0; i < n; i++) {
      previous = paths[i] = frontDecoded(in, previous, "shard path " + i);
    }
    return new Manifest(input, shards(in, paths, columns, new Manifest(input, List.of(),
        classNames)), classNames);
  }

  private static List<Shard> shards(BinaryIn in, String[] paths, ParquetColumns columns,
      Manifest located) {
    int n = paths.length;
    ShardFormat[] formats = new ShardFormat[n];
    for (int i = 0; i < n; i++) {
      formats[i] = format(in.readByte("the formats"), paths[i], columns);
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
    String previous = "";
    for (int i = 0; i < n; i++) {
      List<FolderEntry> files = entries[i] == 0 ? List.of() : new ArrayList<>(entries[i]);
      for (int j = 0; j < entries[i]; j++) {
        previous = frontDecoded(in, previous, "an entry of " + paths[i]);
        files.add(new FolderEntry(previous, label(in.readZigZag("a label"), paths[i])));
      }
      shards.add(new Shard(located.resolve(paths[i]), formats[i], bytes[i], times[i], samples[i],
          files, formats[i] == ShardFormat.PARQUET ? columns : null));
    }
    if (in.remaining() != 0) {
      throw BinaryIn.invalid(in.remaining() + " bytes after the last column");
    }
    return shards;
  }

  /**
   * Writes {@code path} as the length of the prefix it shares with {@code previous} (in UTF-16
   * units: {@link Wtf8} joins a cut surrogate pair back whole) and the rest as a string.
   */
  private static String frontCoded(BinaryOut out, String previous, String path) {
    int max = Math.min(previous.length(), path.length());
    int shared = 0;
    while (shared < max && previous.charAt(shared) == path.charAt(shared)) {
      shared++;
    }
    out.writeVarint(shared);
    out.writeString(path.substring(shared));
    return path;
  }

  private static String frontDecoded(BinaryIn in, String previous, String what) {
    int shared = in.readCount(what + "'s shared prefix", previous.length());
    String rest = in.readString(what);
    return shared == 0 ? rest : previous.substring(0, shared).concat(rest);
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
      throw BinaryIn.invalid("shard " + path + " has format code " + code
          + " (1 TAR, 2 IMAGE_FOLDER, 3 PARQUET)");
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
}
