package dev.spindle.spark.plan;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.Manifest;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes a {@link Manifest} as JSON, so the shards are counted once and the manifest is
 * reused while they are unchanged (check with {@link ManifestCheck} before reuse). The format is in
 * the package documentation. Stateless; any thread. Streams passed in stay owned by the caller and
 * are not closed.
 */
public final class ManifestCodec {
  static final String FORMAT = "spindle-manifest/2";
  /** Counted by the tar reader before counting and reading shared one parser (see below). */
  private static final String OUTDATED = "spindle-manifest/1";
  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES);

  private ManifestCodec() {}

  /**
   * A manifest of an earlier format: valid once, but its sample counts may differ from what
   * today's readers yield (format 1 counted tar samples with a parser of its own), so it must be
   * counted again rather than trusted.
   */
  public static final class OutdatedException extends IllegalArgumentException {
    OutdatedException(String format) {
      super("Outdated manifest: format \"" + format + "\" counted tar shards with an earlier"
          + " parser (expected \"" + FORMAT + "\")");
    }
  }

  private record EntryJson(String path, int label) {}

  private record ShardJson(String uri, ShardFormat format, long bytes, long modificationTime,
      long samples, List<EntryJson> entries) {}

  private record ManifestJson(String format, String input, List<String> classNames,
      List<ShardJson> shards) {}

  /** The manifest as a JSON document. */
  public static String toJson(Manifest manifest) {
    try {
      return MAPPER.writeValueAsString(toDto(manifest));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write manifest of " + manifest.input(), e);
    }
  }

  /** Writes the manifest's JSON to {@code out}. */
  public static void write(Manifest manifest, OutputStream out) throws IOException {
    MAPPER.writer().without(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
        .writeValue(out, toDto(manifest));
  }

  /**
   * Parses a document written by {@link #toJson}; refuses others with the reason.
   *
   * @throws OutdatedException for a document of an earlier format, to be counted again
   */
  public static Manifest fromJson(String json) {
    try {
      return fromDto(MAPPER.readValue(json, ManifestJson.class));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid manifest: " + e.getOriginalMessage(), e);
    }
  }

  /**
   * Reads a manifest from {@code in}; refuses malformed documents with the reason.
   *
   * @throws OutdatedException for a document of an earlier format, to be counted again
   */
  public static Manifest read(InputStream in) throws IOException {
    try {
      return fromDto(MAPPER.reader()
          .without(JsonParser.Feature.AUTO_CLOSE_SOURCE)
          .readValue(in, ManifestJson.class));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid manifest: " + e.getOriginalMessage(), e);
    }
  }

  private static ManifestJson toDto(Manifest m) {
    List<ShardJson> shards = new ArrayList<>(m.shards().size());
    for (Shard s : m.shards()) {
      List<EntryJson> entries = new ArrayList<>(s.entries().size());
      for (FolderEntry e : s.entries()) {
        entries.add(new EntryJson(e.path(), e.label()));
      }
      shards.add(new ShardJson(s.uri(), s.format(), s.bytes(), s.modificationTime(), s.samples(),
          entries));
    }
    return new ManifestJson(FORMAT, m.input(), m.classNames(), shards);
  }

  private static Manifest fromDto(ManifestJson dto) {
    if (dto != null && OUTDATED.equals(dto.format())) {
      throw new OutdatedException(dto.format());
    }
    if (dto == null || !FORMAT.equals(dto.format())) {
      throw new IllegalArgumentException("Invalid manifest: format \""
          + (dto == null ? null : dto.format()) + "\" (expected \"" + FORMAT + "\")");
    }
    require(dto.input() != null && dto.shards() != null && dto.classNames() != null,
        "\"input\", \"shards\" and \"classNames\" are required");
    List<Shard> shards = new ArrayList<>(dto.shards().size());
    for (ShardJson s : dto.shards()) {
      require(s != null && s.uri() != null && s.format() != null && s.entries() != null,
          "a shard lacks \"uri\", \"format\" or \"entries\"");
      List<FolderEntry> entries = new ArrayList<>(s.entries().size());
      for (EntryJson e : s.entries()) {
        require(e != null && e.path() != null, "an entry of " + s.uri() + " lacks \"path\"");
        entries.add(new FolderEntry(e.path(), e.label()));
      }
      shards.add(new Shard(s.uri(), s.format(), s.bytes(), s.modificationTime(), s.samples(),
          entries));
    }
    return new Manifest(dto.input(), shards, dto.classNames());
  }

  private static void require(boolean ok, String what) {
    if (!ok) {
      throw new IllegalArgumentException("Invalid manifest: " + what);
    }
  }
}
