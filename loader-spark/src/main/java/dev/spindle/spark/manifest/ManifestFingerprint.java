package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.Shard;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What identifies a manifest's sample numbering, so that a loader state is only ever resumed on the
 * numbering it was written for. The hash covers, in canonical shard order, each shard's URI
 * relative to the manifest's input (for a brace pattern, its folder: {@link Manifest#base()}),
 * format, size and sample count, a folder shard's files and labels, and the class names; it leaves
 * out the input location (a copied data set keeps its fingerprint), modification times (see {@link
 * ManifestCheck} for change detection) and a Parquet shard's column names (they do not change the
 * numbering).
 *
 * @param sha256 64 lowercase hex digits, see the package documentation for the exact bytes hashed
 * @param shards the manifest's shard count, for messages
 * @param samples the manifest's sample count, for messages
 */
public record ManifestFingerprint(String sha256, int shards, long samples) implements Serializable {

  /** The fingerprint of a manifest; linear in its shards and folder entries. */
  public static ManifestFingerprint of(Manifest manifest) {
    MessageDigest sha = newSha256();
    try (DataOutputStream out =
        new DataOutputStream(
            new BufferedOutputStream(
                new DigestOutputStream(OutputStream.nullOutputStream(), sha), 64 * 1024))) {
      writeString(out, "spindle-manifest-fingerprint/1");
      out.writeInt(manifest.shards().size());
      String base = manifest.base();
      for (Shard shard : manifest.shards()) {
        writeString(out, relative(base, shard.uri()));
        writeString(out, shard.format().name());
        out.writeLong(shard.bytes());
        out.writeLong(shard.samples());
        out.writeInt(shard.entries().size());
        for (FolderEntry entry : shard.entries()) {
          writeString(out, entry.path());
          out.writeInt(entry.label());
        }
      }
      out.writeInt(manifest.classNames().size());
      for (String name : manifest.classNames()) {
        writeString(out, name);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ManifestFingerprint(
        HexFormat.of().formatHex(sha.digest()), manifest.shards().size(), manifest.totalSamples());
  }

  /** For messages: "3f2a…9c01 (12 shards, 1200 samples)". */
  public String describe() {
    return sha256.substring(0, 12) + "… (" + shards + " shards, " + samples + " samples)";
  }

  static String relative(String input, String uri) {
    if (!uri.startsWith(input)) {
      return uri;
    }
    String rest = uri.substring(input.length());
    return rest.startsWith("/") ? rest.substring(1) : rest;
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(utf8.length);
    out.write(utf8);
  }

  private static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("The JVM has no SHA-256", e);
    }
  }
}
