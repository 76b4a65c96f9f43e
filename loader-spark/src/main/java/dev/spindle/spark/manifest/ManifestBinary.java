package dev.spindle.spark.manifest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.zip.CRC32C;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.Inflater;

/**
 * The manifest's compact form ({@code spindle-manifest-bin/2}, layout in the package
 * documentation): the same content as {@link ManifestCodec}'s JSON in about a tenth of the bytes,
 * read in a fraction of the time. It records the {@link ManifestFingerprint} of what it holds,
 * checked on every read, a CRC-32C of every byte, and the size and modification time of the JSON
 * file it was written beside ({@link Binding}): the JSON is the authoritative form, this one is
 * used only while that JSON file is the one it was derived from. Stateless; any thread. Streams
 * passed in stay owned by the caller and are not closed.
 */
public final class ManifestBinary {
  static final String FORMAT = "spindle-manifest-bin/2";
  private static final byte[] TAG = (FORMAT + "\n").getBytes(StandardCharsets.US_ASCII);

  /** Tag, binding (2 × 8), fingerprint (32 + 4 + 8), body and deflated lengths (2 × 4). */
  private static final int HEADER = TAG.length + 16 + 44 + 8;

  /**
   * The largest binary form read: 1 GiB, some 200 million shards of the 5 bytes a sorted tar shard
   * takes (a brace pattern names at most 10 million).
   */
  static final int MAX_BYTES = 1 << 30;

  private ManifestBinary() {}

  /**
   * The JSON file a binary form was derived from, as its file system reported it after it was
   * written: the binary form stands for that JSON only while the JSON still has this size and
   * modification time (the same test {@link ManifestCheck} applies to shards).
   */
  public record Binding(long jsonBytes, long jsonModificationTime) {
    /** Bound to no file (a binary form on its own, as in tests and benchmarks). */
    public static final Binding NONE = new Binding(-1, -1);
  }

  /** A binary form as read: the manifest, the JSON it stands for, and its verified fingerprint. */
  public record Stored(Manifest manifest, Binding binding, ManifestFingerprint fingerprint) {}

  /**
   * The binary form of {@code m}, bound to {@code json}.
   *
   * @throws IllegalArgumentException for a manifest the JSON form refuses as well (a shard not
   *     below its input, a preprocess output's, shards naming different Parquet columns)
   */
  public static byte[] toBytes(Manifest m, Binding json) {
    byte[] body = ManifestColumns.encode(m);
    byte[] deflated = deflate(body);
    ManifestFingerprint fingerprint = ManifestFingerprint.of(m);
    BinaryOut out = new BinaryOut(HEADER + deflated.length + 4);
    out.writeBytes(TAG, 0, TAG.length);
    out.writeLong(json.jsonBytes());
    out.writeLong(json.jsonModificationTime());
    byte[] sha = HexFormat.of().parseHex(fingerprint.sha256());
    out.writeBytes(sha, 0, sha.length);
    out.writeInt(fingerprint.shards());
    out.writeLong(fingerprint.samples());
    out.writeInt(body.length);
    out.writeInt(deflated.length);
    out.writeBytes(deflated, 0, deflated.length);
    out.writeInt(crc(out.array(), out.size()));
    return out.toByteArray();
  }

  /** Writes {@link #toBytes} to {@code out}. */
  public static void write(Manifest m, Binding json, OutputStream out) throws IOException {
    out.write(toBytes(m, json));
  }

  /**
   * Reads a binary form from {@code in} (to its end, at most {@value #MAX_BYTES} bytes).
   *
   * @throws IllegalArgumentException for bytes that are not an intact binary manifest, naming the
   *     problem
   * @throws IOException when {@code in} fails
   */
  public static Stored read(InputStream in) throws IOException {
    byte[] file = in.readNBytes(MAX_BYTES + 1); // grows as it reads
    if (file.length > MAX_BYTES) {
      throw BinaryIn.invalid("it is larger than " + MAX_BYTES + " bytes");
    }
    return fromBytes(file);
  }

  /**
   * Parses {@link #toBytes}' output: checks the tag and the CRC, inflates and decodes the columns,
   * then checks that they hash to the recorded fingerprint.
   *
   * @throws IllegalArgumentException for bytes that are not an intact binary manifest, naming the
   *     problem
   */
  public static Stored fromBytes(byte[] file) {
    if (file.length < TAG.length || !Arrays.equals(file, 0, TAG.length, TAG, 0, TAG.length)) {
      throw BinaryIn.invalid("it does not start with \"" + FORMAT + "\"");
    }
    if (file.length < HEADER + 4) {
      throw BinaryIn.invalid("it ends inside its header (" + file.length + " bytes)");
    }
    BinaryIn crc = new BinaryIn(file, file.length - 4, 4);
    int recorded = crc.readInt("the CRC");
    if (recorded != crc(file, file.length - 4)) {
      throw BinaryIn.invalid("its CRC-32C does not match its bytes (damaged or truncated)");
    }
    BinaryIn in = new BinaryIn(file, TAG.length, file.length - 4 - TAG.length);
    Binding binding = new Binding(in.readLong("the binding"), in.readLong("the binding"));
    String sha = HexFormat.of().formatHex(in.readBytes(32, "the fingerprint"));
    ManifestFingerprint recordedPrint =
        new ManifestFingerprint(sha, in.readInt("the fingerprint"), in.readLong("the fingerprint"));
    int bodyLength = in.readInt("the columns' length");
    int deflatedLength = in.readInt("the compressed length");
    if (bodyLength < 0 || deflatedLength != in.remaining()) {
      throw BinaryIn.invalid(
          "lengths "
              + bodyLength
              + " and "
              + deflatedLength
              + " for "
              + in.remaining()
              + " compressed bytes");
    }
    Manifest m = ManifestColumns.decode(inflate(file, in.position(), deflatedLength, bodyLength));
    ManifestFingerprint found = ManifestFingerprint.of(m);
    if (!found.equals(recordedPrint)) {
      throw BinaryIn.invalid(
          "its shards hash to "
              + found.describe()
              + ", not to the "
              + recordedPrint.describe()
              + " it records");
    }
    return new Stored(m, binding, found);
  }

  private static byte[] deflate(byte[] body) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(body.length / 2 + 64);
    Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION);
    try (OutputStream out = new DeflaterOutputStream(bytes, deflater, 1 << 16)) {
      out.write(body);
    } catch (IOException e) {
      throw new UncheckedIOException("a byte array cannot fail to write", e);
    } finally {
      deflater.end();
    }
    return bytes.toByteArray();
  }

  /**
   * Inflates exactly {@code length} bytes from exactly {@code len} compressed ones: a stream that
   * holds more or fewer, or leaves input unread, is refused. The output grows as it is produced, so
   * a damaged length claims no memory.
   */
  private static byte[] inflate(byte[] file, int off, int len, int length) {
    if (length > Integer.MAX_VALUE - 16) {
      throw BinaryIn.invalid("its columns claim " + length + " bytes");
    }
    Inflater inflater = new Inflater();
    try {
      inflater.setInput(file, off, len);
      byte[] body = new byte[Math.min(length + 1, 1 << 20)];
      int n = 0;
      while (!inflater.finished() && n <= length) {
        if (n == body.length) {
          body = Arrays.copyOf(body, (int) Math.min(length + 1L, 2L * n));
        }
        int got = inflater.inflate(body, n, body.length - n);
        if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
          throw BinaryIn.invalid("its compressed columns end early (truncated or damaged)");
        }
        n += got;
      }
      if (n != length || inflater.getRemaining() != 0) {
        throw BinaryIn.invalid(
            "its columns inflate to "
                + (n > length ? "more than " : "")
                + n
                + " bytes from "
                + (len - inflater.getRemaining())
                + " of "
                + len
                + " compressed ones, not the "
                + length
                + " it records");
      }
      return n == body.length ? body : Arrays.copyOf(body, n);
    } catch (DataFormatException e) {
      throw BinaryIn.invalid("its compressed columns are damaged: " + e.getMessage());
    } finally {
      inflater.end();
    }
  }

  private static int crc(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }
}
