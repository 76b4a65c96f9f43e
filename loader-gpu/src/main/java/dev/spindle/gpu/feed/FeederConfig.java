package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.ring.WaitPolicy;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;

/**
 * Settings of one {@link GpuFeeder}. Memory is fixed at creation: {@code slots} host slots of
 * {@code maxRows} uint8 images (pinned on CUDA, in slabs under 2 GiB) and as many device slots
 * (input bytes, int64 labels and, unless the output is uint8, the normalised tensor).
 *
 * <p>Immutable value; any thread.
 *
 * @param slots ring slots (batches in flight between fillers and trainers), at least 2
 * @param maxRows most images per batch
 * @param normalize image shape and what the trainer receives
 * @param leaseTimeout how long a trainer may hold a batch; past it the feeder fails
 * @param closeGrace how long {@link GpuFeeder#close()} waits for outstanding leases
 * @param waitPolicy how the copy thread idles while polling copy events
 * @param pinnedPoolBytes size of the pinned pool producers may allocate Arrow batches from, so
 *     images are copied to the device in place (0: none; every batch is staged into a slot)
 * @param fields the batches' extra fields, in column order (empty: image and label only); each gets
 *     its own region in every slot, beside the images
 * @param images whether batches carry an {@code image} column (false: a job whose samples have no
 *     image, e.g. pre-tokenised text; its slots hold no image region, {@code normalize} is unused
 *     and its batches' image tensor is empty)
 */
public record FeederConfig(
    int slots,
    int maxRows,
    NormalizeSpec normalize,
    Duration leaseTimeout,
    Duration closeGrace,
    WaitPolicy waitPolicy,
    long pinnedPoolBytes,
    List<SlotField> fields,
    boolean images) {

  /** Most extra fields a feeder carries (BATCH's field table must stay small). */
  public static final int MAX_FIELDS = 64;

  /** Validates every field, naming the bad value. */
  public FeederConfig {
    if (slots < 2) {
      throw new IllegalArgumentException("Invalid slots: " + slots + " (must be >= 2)");
    }
    if (maxRows <= 0) {
      throw new IllegalArgumentException("Invalid batch size: " + maxRows + " (must be > 0)");
    }
    if (normalize == null) {
      throw new IllegalArgumentException("Invalid normalize spec: null");
    }
    checkPositive("lease timeout", leaseTimeout);
    if (closeGrace == null || closeGrace.isNegative()) {
      throw new IllegalArgumentException("Invalid close grace: " + closeGrace + " (must be >= 0)");
    }
    if (waitPolicy == null) {
      throw new IllegalArgumentException("Invalid wait policy: null");
    }
    if (pinnedPoolBytes < 0) {
      throw new IllegalArgumentException(
          "Invalid pinned pool size: " + pinnedPoolBytes + " (must be >= 0)");
    }
    fields = checkFields(fields);
  }

  /** A feeder whose batches carry images (the usual case). */
  public FeederConfig(
      int slots,
      int maxRows,
      NormalizeSpec normalize,
      Duration leaseTimeout,
      Duration closeGrace,
      WaitPolicy waitPolicy,
      long pinnedPoolBytes,
      List<SlotField> fields) {
    this(
        slots,
        maxRows,
        normalize,
        leaseTimeout,
        closeGrace,
        waitPolicy,
        pinnedPoolBytes,
        fields,
        true);
  }

  /**
   * This config for batches without an {@code image} column: no image region in the slots, nothing
   * normalised, an empty image tensor in every batch.
   */
  public FeederConfig withoutImages() {
    return new FeederConfig(
        slots,
        maxRows,
        normalize,
        leaseTimeout,
        closeGrace,
        waitPolicy,
        pinnedPoolBytes,
        fields,
        false);
  }

  /** Bytes of one row's uint8 input image in a slot: 0 for a feeder without images. */
  public int inputBytesPerImage() {
    return images ? normalize.inputBytesPerImage() : 0;
  }

  private static List<SlotField> checkFields(List<SlotField> fields) {
    if (fields == null || fields.size() > MAX_FIELDS) {
      throw new IllegalArgumentException(
          "Invalid fields: "
              + (fields == null ? "null" : fields.size() + " extra fields")
              + " (at most "
              + MAX_FIELDS
              + ")");
    }
    HashSet<String> names = new HashSet<>();
    for (SlotField f : fields) {
      if (!names.add(f.name())) {
        throw new IllegalArgumentException("Invalid fields: '" + f.name() + "' twice");
      }
    }
    return List.copyOf(fields);
  }

  /** 8 slots, 60 s leases, 10 s close grace, parking wait policy, no pinned pool. */
  public static FeederConfig of(int maxRows, NormalizeSpec normalize) {
    return new FeederConfig(
        8,
        maxRows,
        normalize,
        Duration.ofSeconds(60),
        Duration.ofSeconds(10),
        WaitPolicy.PARKING,
        0,
        List.of());
  }

  /** This config with the batches' extra fields {@code f} (in column order). */
  public FeederConfig withFields(List<SlotField> f) {
    return new FeederConfig(
        slots,
        maxRows,
        normalize,
        leaseTimeout,
        closeGrace,
        waitPolicy,
        pinnedPoolBytes,
        f,
        images);
  }

  /** This config with a pinned pool of {@code bytes} for zero-copy batches (0: none). */
  public FeederConfig withPinnedPool(long bytes) {
    return new FeederConfig(
        slots, maxRows, normalize, leaseTimeout, closeGrace, waitPolicy, bytes, fields, images);
  }

  /** This config with {@code slots} slots. */
  public FeederConfig withSlots(int n) {
    return new FeederConfig(
        n,
        maxRows,
        normalize,
        leaseTimeout,
        closeGrace,
        waitPolicy,
        pinnedPoolBytes,
        fields,
        images);
  }

  /** This config with another lease timeout. */
  public FeederConfig withLeaseTimeout(Duration d) {
    return new FeederConfig(
        slots, maxRows, normalize, d, closeGrace, waitPolicy, pinnedPoolBytes, fields, images);
  }

  /** This config with another close grace. */
  public FeederConfig withCloseGrace(Duration d) {
    return new FeederConfig(
        slots, maxRows, normalize, leaseTimeout, d, waitPolicy, pinnedPoolBytes, fields, images);
  }

  /** This config with another wait policy. */
  public FeederConfig withWaitPolicy(WaitPolicy p) {
    return new FeederConfig(
        slots, maxRows, normalize, leaseTimeout, closeGrace, p, pinnedPoolBytes, fields, images);
  }

  private static void checkPositive(String what, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException("Invalid " + what + ": " + d + " (must be > 0)");
    }
  }
}
