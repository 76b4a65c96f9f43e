package dev.spindle.gpu.bridge;

/**
 * Whether a trainer's loader state may resume its rank's feed: a state from another epoch or
 * another manifest names batches of a different sequence, so resuming with it would skip or
 * repeat batches of this one; a resume point outside the rank's batches would skip all of them
 * (or fail the feed task that starts there). Either is refused with BAD_RESUME naming the values
 * and the range, and the rank goes on for its next trainer. Stateless; any thread.
 */
final class ResumeCheck {
  private static final String HINT = " (start the trainer without a state, or restart the feed "
      + "job from its state)";

  private ResumeCheck() {}

  /**
   * Refuses a resume point other than -1 (no state) or {@code 0..batches}, the batches the rank
   * has to serve ({@code Long.MAX_VALUE}: not known, only negative points are refused).
   *
   * @throws ProtocolException BAD_RESUME naming the point and the range
   */
  static void range(int rank, long resume, long batches) {
    if (resume >= -1 && resume <= batches) {
      return;
    }
    String what = batches == Long.MAX_VALUE ? "" : ", but rank " + rank + " has " + batches
        + " batches to serve";
    String range = batches == Long.MAX_VALUE ? ">= 0" : "0.." + batches;
    throw new ProtocolException(BridgeError.BAD_RESUME, "Invalid resume point: the trainer's "
        + "state says " + resume + " batches consumed" + what + " (must be " + range
        + ", or -1 for no state)");
  }

  /**
   * Refuses {@code stated} (the trainer's state) unless it is from the epoch and manifest of
   * {@code served} (the rank's feed); a value either side does not know is not compared.
   *
   * @throws ProtocolException BAD_RESUME naming both epochs or both manifests
   */
  static void check(int rank, BridgeServer.Epoch served, BridgeServer.Epoch stated) {
    if (stated.number() >= 0 && served.number() >= 0 && stated.number() != served.number()) {
      throw new ProtocolException(BridgeError.BAD_RESUME, "Invalid resume state: it is from "
          + "epoch " + stated.number() + ", but rank " + rank + " is served epoch "
          + served.number() + " now" + HINT);
    }
    if (!stated.manifest().isEmpty() && !served.manifest().isEmpty()
        && !stated.manifest().equals(served.manifest())) {
      throw new ProtocolException(BridgeError.BAD_RESUME, "Invalid resume state: it is for "
          + "manifest " + PeerText.quote(stated.manifest()) + ", but rank " + rank
          + " is served from manifest " + served.manifest() + HINT);
    }
  }
}
