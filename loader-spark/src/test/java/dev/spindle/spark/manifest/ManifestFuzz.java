package dev.spindle.spark.manifest;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz target of the manifest reader ({@link ManifestCodec}): the input is a {@code _manifest.json}
 * / cached manifest document. The property: {@link ManifestCodec#read} returns a manifest or throws
 * {@link IllegalArgumentException} (its documented refusal, {@link ManifestCodec.OutdatedException}
 * included), and a manifest it accepts writes back to JSON that reads as the same manifest, and to
 * a binary form ({@link ManifestBinary}) that reads as the same manifest with the same fingerprint.
 */
public final class ManifestFuzz {
  private ManifestFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("manifest", ManifestFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) {
    Manifest m;
    try {
      m = ManifestCodec.read(new ByteArrayInputStream(data));
    } catch (IllegalArgumentException e) {
      return;
    } catch (IOException e) {
      throw new UncheckedIOException("a byte array cannot fail to read", e);
    }
    String json = ManifestCodec.toJson(m);
    String again = ManifestCodec.toJson(ManifestCodec.fromJson(json));
    if (!json.equals(again)) {
      throw new IllegalStateException("manifest changed on a round trip:\n" + json + "\n" + again);
    }
    ManifestBinary.Stored binary =
        ManifestBinary.fromBytes(ManifestBinary.toBytes(m, ManifestBinary.Binding.NONE));
    if (!binary.manifest().equals(m) || !binary.fingerprint().equals(ManifestFingerprint.of(m))) {
      throw new IllegalStateException(
          "the binary form reads as another manifest:\n"
              + json
              + "\n"
              + ManifestCodec.toJson(binary.manifest()));
    }
    String text = new String(data, StandardCharsets.UTF_8);
    try {
      ManifestCodec.fromJson(text);
    } catch (IllegalArgumentException e) {
      // the String form may differ where the bytes were not UTF-8
    }
  }
}
