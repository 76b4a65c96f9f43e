package dev.spindle.spark.serve;

/**
 * The reports' {@code host_copies_per_sample}, summed over task outcomes: image bytes the tasks
 * copied on the host on the way to their consumer ({@link TaskOutcome#hostCopyBytes()}: stored
 * pixels copied out of the file by the reader and into their rows, stand-ins, a feeder's staging
 * copies) per sample they handed over, in units of one sample's image bytes. 0 when every image was
 * decoded straight into the batch it was delivered in (tar, image folder and Parquet inputs); 2 for
 * a preprocess output (each stored image is copied by its reader into the sample's bytes, then into
 * its row). Driver thread.
 */
public final class HostCopies {
  private long copied;
  private double delivered;

  /** Adds what {@code o} copied and handed over. */
  public void add(TaskOutcome o) {
    copied += o.hostCopyBytes();
    delivered += (double) o.rowBytes() * o.runs().stream().mapToLong(BatchRun::deliveredRows).sum();
  }

  /** Copies per delivered sample, or null when nothing was handed over. */
  public Double perSample() {
    return delivered == 0 ? null : copied / delivered;
  }
}
