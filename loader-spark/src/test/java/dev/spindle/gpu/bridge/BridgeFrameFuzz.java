package dev.spindle.gpu.bridge;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;

/**
 * Fuzz target of the trainer bridge's server-side message decoding: the input is what a trainer
 * sends on its connection, decoded as a {@link TrainerSession} does — frames ({@link Wire#read}),
 * the HELLO first ({@link Hello#parse}, the device check, the peer's strings as they reach the log
 * through {@link PeerText}), then NEXT, RELEASE and BYE payloads. The property: every byte sequence
 * decodes, or ends in {@link ProtocolException} (the peer is refused with an ERROR) or {@link
 * EOFException} (the peer left mid-message); a frame header is checked before its payload is
 * allocated, so nothing over {@link Wire#MAX_PAYLOAD} is. Lives in loader-spark's tests, in the
 * bridge's package, beside the other targets of the fuzz harness. Any thread.
 */
public final class BridgeFrameFuzz {
  private BridgeFrameFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("bridge", BridgeFrameFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) throws IOException {
    ReadableByteChannel ch = Channels.newChannel(new ByteArrayInputStream(data));
    try {
      Wire.Frame f = Wire.read(ch);
      if (f == null) {
        return;
      }
      if (f.type() != Wire.HELLO) {
        return; // the session refuses any other first message
      }
      hello(Hello.parse(f.payload()));
      while ((f = Wire.read(ch)) != null) {
        switch (f.type()) {
          case Wire.NEXT -> TrainerSession.onlyLong("NEXT", f.payload());
          case Wire.RELEASE -> TrainerSession.onlyLong("RELEASE", f.payload());
          case Wire.BYE -> {
            TrainerSession.checkEnd("BYE", f.payload());
            return;
          }
          default -> {
            return; // refused: "Invalid message type"
          }
        }
      }
    } catch (ProtocolException | EOFException e) {
      // the documented refusals
    }
  }

  private static void hello(Hello h) {
    for (String s : new String[] {h.token(), h.device(), h.plan()}) {
      String quoted = PeerText.quote(s);
      if (quoted.length() > 6 * PeerText.SHOWN + 40) {
        throw new IllegalStateException(
            "a peer string reached the log at " + quoted.length() + " chars");
      }
    }
    ServedMemory.checkDevice(h.device());
  }
}
