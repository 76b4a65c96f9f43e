package dev.spindle.spark.manifest;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Fuzz target of the manifest's binary form ({@link ManifestBinary}), a {@code
 * _spindle_manifest.bin}. Each input is read three ways: as a file; as a file with its CRC-32C
 * recomputed (so that damage reaches the header, the inflater and the columns behind a valid CRC);
 * and as the inflated columns alone ({@link ManifestColumns#decode}). The property: each returns a
 * manifest or throws {@link IllegalArgumentException} (the documented refusal), and a manifest it
 * accepts writes back, in binary and in JSON, to forms that read as the same manifest.
 */
public final class ManifestBinaryFuzz {
  private ManifestBinaryFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("manifest-bin", ManifestBinaryFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) {
    try {
      roundTrip(ManifestBinary.fromBytes(data).manifest());
    } catch (IllegalArgumentException e) {
      // refused: damaged or not a binary manifest
    }
    if (data.length >= 4) {
      try {
        roundTrip(ManifestBinary.fromBytes(resealed(data)).manifest());
      } catch (IllegalArgumentException e) {
        // refused behind a valid CRC
      }
    }
    try {
      roundTrip(ManifestColumns.decode(data));
    } catch (IllegalArgumentException e) {
      // refused columns
    }
  }

  private static void roundTrip(Manifest m) {
    byte[] bytes = ManifestBinary.toBytes(m, ManifestBinary.Binding.NONE);
    Manifest again = ManifestBinary.fromBytes(bytes).manifest();
    if (!again.equals(m)) {
      throw new IllegalStateException(
          "manifest changed on a binary round trip:\n" + m + "\n" + again);
    }
    Manifest json = ManifestCodec.fromJson(ManifestCodec.toJson(m));
    if (!json.equals(m)) {
      throw new IllegalStateException("binary and JSON disagree:\n" + m + "\n" + json);
    }
  }

  private static byte[] resealed(byte[] data) {
    byte[] out = Arrays.copyOf(data, data.length);
    CRC32C crc = new CRC32C();
    crc.update(out, 0, out.length - 4);
    int v = (int) crc.getValue();
    for (int i = 0; i < 4; i++) {
      out[out.length - 4 + i] = (byte) (v >>> (24 - 8 * i));
    }
    return out;
  }
}
