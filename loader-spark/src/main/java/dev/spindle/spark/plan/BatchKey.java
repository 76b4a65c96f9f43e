package dev.spindle.spark.plan;

import java.io.Serializable;

/**
 * The deterministic identity of one planned batch: a retried or speculative task recomputes the
 * same keys, so a consumer that remembers the keys it accepted never takes a batch twice.
 *
 * @param epoch the epoch
 * @param leg 0 for the epoch's original split, k after the k-th re-splitting resume
 * @param rank the trainer rank
 * @param batch the batch's number within the rank's leg
 */
public record BatchKey(int epoch, int leg, int rank, int batch) implements Serializable {
  @Override
  public String toString() {
    return "e" + epoch + "/l" + leg + "/r" + rank + "/b" + batch;
  }
}
