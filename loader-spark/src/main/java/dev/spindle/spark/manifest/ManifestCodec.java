package dev.spindle.spark.manifest;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.io.CharConversionException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes a {@link Manifest} as JSON, so the shards are counted once and the manifest is
 * reused while they are unchanged (check with {@link ManifestCheck} before reuse). The format is in
 * the package documentation; {@link ManifestBinary} is its compact form, read where it stands for
 * the JSON. Stateless; any thread. Streams passed in stay owned by the caller and are not closed.
 */
public final class ManifestCodec {
  static final String FORMAT = "spindle-manifest/4";

  /** Earlier formats and why a manifest of theirs is counted again rather than trusted. */
  private static final Map<String, String> OUTDATED =
      Map.of(
          "spindle-manifest/1",
          "counted tar shards with an earlier parser",
          "spindle-manifest/2",
          "recorded absolute shard URIs, trusted under another input,"
              + " and knew no Parquet or .tgz shards",
          "spindle-manifest/3",
          "counted tar shards before macOS and WebDataset metadata members were passed over and"
              + " concatenated tars read whole, listed image folders before torchvision's"
              + " ImageFolder rules, and carried no fingerprint of its own content");

  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES);

  private ManifestCodec() {}

  /**
   * A manifest of an earlier format: valid once, but not to be trusted today (its sample counts or
   * shard paths may differ from what today's catalog finds), so it must be counted again.
   */
  public static final class OutdatedException extends IllegalArgumentException {
    OutdatedException(String format) {
      super(
          "Outdated manifest: format \""
              + format
              + "\" "
              + OUTDATED.get(format)
              + " (expected \""
              + FORMAT
              + "\")");
    }
  }

  private record EntryJson(String path, int label) {}

  private record ShardJson(
      String path,
      ShardFormat format,
      long bytes,
      long modificationTime,
      long samples,
      List<EntryJson> entries) {}

  private record ColumnsJson(String image, String label) {}

  private record ManifestJson(
      String format,
      String input,
      String fingerprint,
      List<String> classNames,
      ColumnsJson parquetColumns,
      List<ShardJson> shards) {}

  /**
   * A document whose shards do not hash to the {@code fingerprint} it records: it was edited after
   * it was written (a sample count lowered by hand would leave samples out of every plan unseen),
   * so it is not to be used as it stands.
   */
  public static final class EditedException extends IllegalArgumentException {
    EditedException(ManifestFingerprint found, String recorded) {
      super(
          "Invalid manifest: its shards hash to "
              + found.describe()
              + ", not to the fingerprint "
              + (recorded.length() > 12 ? recorded.substring(0, 12) + "…" : recorded)
              + " it records: it was edited after it was written");
    }
  }

  /**
   * A document as read.
   *
   * @param manifest the manifest
   * @param fingerprint the fingerprint it records, checked against its shards; null for one written
   *     before fingerprints were (nothing to check it by)
   */
  public record Document(Manifest manifest, String fingerprint) {}

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
    MAPPER
        .writer()
        .without(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
        .writeValue(out, toDto(manifest));
  }

  /**
   * Parses a document written by {@link #toJson}; refuses others with the reason.
   *
   * @throws OutdatedException for a document of an earlier format, to be counted again
   */
  public static Manifest fromJson(String json) {
    try {
      return fromTree(MAPPER.readTree(json)).manifest();
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid manifest: " + e.getOriginalMessage(), e);
    }
  }

  /**
   * Reads a manifest from {@code in}; refuses malformed documents with the reason.
   *
   * @throws IllegalArgumentException for bytes that are not a manifest of this format
   * @throws IOException when {@code in} fails
   * @throws OutdatedException for a document of an earlier format, to be counted again
   */
  public static Manifest read(InputStream in) throws IOException {
    return readDocument(in).manifest();
  }

  /**
   * {@link #read}, saying whether the document recorded a fingerprint.
   *
   * @throws EditedException for a document whose shards do not hash to the fingerprint it records
   */
  public static Document readDocument(InputStream in) throws IOException {
    try {
      return fromTree(MAPPER.reader().without(JsonParser.Feature.AUTO_CLOSE_SOURCE).readTree(in));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid manifest: " + e.getOriginalMessage(), e);
    } catch (CharConversionException e) { // bytes Jackson took for UTF-32 but are not
      throw new IllegalArgumentException("Invalid manifest: not JSON text: " + e.getMessage(), e);
    }
  }

  /**
   * @throws IllegalArgumentException when a shard is not below the manifest's input: its path could
   *     not be written relative to it
   */
  private static ManifestJson toDto(Manifest m) {
    List<ShardJson> shards = new ArrayList<>(m.shards().size());
    ParquetColumns columns = columnsOf(m);
    for (Shard s : m.shards()) {
      List<EntryJson> entries = new ArrayList<>(s.entries().size());
      for (FolderEntry e : s.entries()) {
        entries.add(new EntryJson(e.path(), e.label()));
      }
      shards.add(
          new ShardJson(
              pathOf(m, s), s.format(), s.bytes(), s.modificationTime(), s.samples(), entries));
    }
    return new ManifestJson(
        FORMAT,
        m.input(),
        ManifestFingerprint.of(m).sha256(),
        m.classNames(),
        columns == null ? null : new ColumnsJson(columns.image(), columns.label()),
        shards);
  }

  /**
   * A shard's path as both forms record it, relative to the manifest's base; shared with {@link
   * ManifestBinary}, so that the two refuse the same manifests.
   *
   * @throws IllegalArgumentException for a preprocess output's part file, or a shard that is not
   *     below the manifest's input
   */
  static String pathOf(Manifest m, Shard s) {
    require(
        !s.format().decoded(),
        "shard "
            + s.uri()
            + " is a preprocess output's part file;"
            + " such an output is read from its own _manifest.json, never cached");
    String path = m.relative(s.uri());
    require(path != null, "shard " + s.uri() + " is not below the input " + m.input());
    return path;
  }

  /**
   * The Parquet columns the manifest's shards name, recorded once; null without Parquet shards.
   *
   * @throws IllegalArgumentException when shards name different columns
   */
  static ParquetColumns columnsOf(Manifest m) {
    ParquetColumns columns = null;
    for (Shard s : m.shards()) {
      require(
          columns == null || s.columns() == null || columns.equals(s.columns()),
          "shards of " + m.input() + " name different Parquet columns");
      columns = columns != null ? columns : s.columns();
    }
    return columns;
  }

  /**
   * The format is checked first: earlier formats have other fields. A document of this format
   * written before the fingerprint was recorded has none: it is read unchecked.
   */
  private static Document fromTree(JsonNode tree) throws JsonProcessingException {
    String format =
        tree == null || !tree.path("format").isTextual() ? null : tree.get("format").asText();
    if (format != null && OUTDATED.containsKey(format)) { // Map.of refuses a null key
      throw new OutdatedException(format);
    }
    if (!FORMAT.equals(format)) {
      throw new IllegalArgumentException(
          "Invalid manifest: format \"" + format + "\" (expected \"" + FORMAT + "\")");
    }
    if (!tree.has("fingerprint")) {
      ((ObjectNode) tree).putNull("fingerprint");
    }
    ManifestJson dto = MAPPER.treeToValue(tree, ManifestJson.class);
    Manifest m = fromDto(dto);
    if (dto.fingerprint() != null) {
      ManifestFingerprint found = ManifestFingerprint.of(m);
      if (!found.sha256().equals(dto.fingerprint())) {
        throw new EditedException(found, dto.fingerprint());
      }
    }
    return new Document(m, dto.fingerprint());
  }

  private static Manifest fromDto(ManifestJson dto) {
    require(
        dto.input() != null && dto.shards() != null && dto.classNames() != null,
        "\"input\", \"shards\" and \"classNames\" are required");
    Manifest located = new Manifest(dto.input(), List.of(), dto.classNames());
    ParquetColumns columns =
        dto.parquetColumns() == null
            ? null
            : new ParquetColumns(dto.parquetColumns().image(), dto.parquetColumns().label());
    List<Shard> shards = new ArrayList<>(dto.shards().size());
    for (ShardJson s : dto.shards()) {
      require(
          s != null && s.path() != null && s.format() != null && s.entries() != null,
          "a shard lacks \"path\", \"format\" or \"entries\"");
      require(
          !s.format().decoded(),
          "shard "
              + s.path()
              + " is a preprocess output's part file"
              + " ("
              + s.format()
              + "); such an output is read from its own _manifest.json");
      require(
          s.format() != ShardFormat.PARQUET || columns != null,
          "Parquet shard " + s.path() + " but no \"parquetColumns\"");
      List<FolderEntry> entries = new ArrayList<>(s.entries().size());
      for (EntryJson e : s.entries()) {
        require(e != null && e.path() != null, "an entry of " + s.path() + " lacks \"path\"");
        entries.add(new FolderEntry(e.path(), e.label()));
      }
      shards.add(
          new Shard(
              located.resolve(s.path()),
              s.format(),
              s.bytes(),
              s.modificationTime(),
              s.samples(),
              entries,
              s.format() == ShardFormat.PARQUET ? columns : null));
    }
    return new Manifest(dto.input(), shards, dto.classNames());
  }

  private static void require(boolean ok, String what) {
    if (!ok) {
      throw new IllegalArgumentException("Invalid manifest: " + what);
    }
  }
}
