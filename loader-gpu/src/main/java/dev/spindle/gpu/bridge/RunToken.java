package dev.spindle.gpu.bridge;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The secret that binds trainer connections to one feed run: a trainer's HELLO must carry it, or
 * the bridge refuses the connection ({@code BAD_TOKEN}) before it looks at the rank. A feed run
 * makes one ({@link #random()}) and hands it to its trainers: in the environment variable {@value
 * #ENV} (which the Python client reads), or through the file the bridge writes beside its socket
 * for trainers started by hand. A trainer of an earlier run, or any other process that was not
 * handed the token, cannot take or skip the rank's batches.
 *
 * <p>Immutable; any thread. {@link #toString()} never shows the value; {@link #matches} compares in
 * constant time.
 */
public final class RunToken implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The environment variable trainers read the token from. */
  public static final String ENV = "SPINDLE_RUN_TOKEN";

  private static final SecureRandom RANDOM = new SecureRandom();
  private final String value;

  private RunToken(String value) {
    this.value = value;
  }

  /** A new token: 32 random bytes as 64 hex digits. */
  public static RunToken random() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return new RunToken(HexFormat.of().formatHex(b));
  }

  /** The token's text: what a trainer presents. */
  public String value() {
    return value;
  }

  /** Whether {@code presented} is this token, in time independent of where they differ. */
  boolean matches(String presented) {
    return MessageDigest.isEqual(sha256(value), sha256(presented == null ? "" : presented));
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RunToken t && matches(t.value);
  }

  @Override
  public int hashCode() {
    return 0; // equal tokens must hash alike, and the value must not leak through the hash
  }

  @Override
  public String toString() {
    return "RunToken(hidden)";
  }
}
