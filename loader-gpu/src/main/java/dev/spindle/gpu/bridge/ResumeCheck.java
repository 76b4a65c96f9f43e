package dev.spindle.gpu.bridge;

/**
 * Whether a trainer's loader state may resume its rank's feed: a state of another plan (seed,
 * epoch, batch size, remainder policy, shuffle window, world size, earlier legs, manifest; see
 * {@link PlanIdentity}) counts batches of a different sequence, so resuming with it would skip or
 * repeat batches of this one; a resume point outside the rank's batches would skip all of them (or
 * fail the feed task that starts there). Either is refused with BAD_RESUME naming the values and
 * the range, and the rank goes on for its next trainer. Stateless; any thread.
 */
final class ResumeCheck {
  private static final String HINT =
      " (start the trainer without a state, or restart the feed " + "job from its state)";

  private ResumeCheck() {}

  /**
   * Refuses a resume point other than -1 (no state) or {@code 0..end}, {@code end} being the number
   * after the rank's last planned batch; with {@link RankFeed#UNKNOWN_END} only points below -1 are
   * refused.
   *
   * @throws ProtocolException BAD_RESUME naming the point and the range
   */
  static void range(int rank, long resume, long end) {
    if (resume >= -1 && resume <= end) {
      return;
    }
    boolean known = end != RankFeed.UNKNOWN_END;
    String what = known ? ", but rank " + rank + " has " + end + " batches to serve" : "";
    throw new ProtocolException(
        BridgeError.BAD_RESUME,
        "Invalid resume point: the trainer's "
            + "state says "
            + resume
            + " batches consumed"
            + what
            + " (must be "
            + (known ? "0.." + end : ">= 0")
            + ", or -1 for no state)");
  }

  /**
   * Refuses a trainer that resumes ({@code resume >= 0}) from a state whose plan identity {@code
   * stated} is not {@code served}, the identity of the state the rank is served from ("": not
   * known, nothing is compared).
   *
   * @throws ProtocolException BAD_RESUME naming each differing field with both values
   */
  static void plan(int rank, String served, long resume, String stated) {
    if (resume < 0 || served.isEmpty() || served.equals(stated)) {
      return;
    }
    throw new ProtocolException(
        BridgeError.BAD_RESUME,
        "Invalid resume state: it is of another "
            + "plan than rank "
            + rank
            + " is served from: "
            + String.join("; ", PlanIdentity.differences(served, stated))
            + HINT);
  }
}
