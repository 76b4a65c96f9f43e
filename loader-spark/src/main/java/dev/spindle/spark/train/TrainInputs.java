package dev.spindle.spark.train;

import dev.spindle.spark.manifest.Manifest;
import java.io.Serializable;

/**
 * What every rank task of a {@code train} run reads, broadcast once: the manifest, the state the
 * run starts from and the epoch it ends before. Each task plans its own epochs from them (one
 * epoch's plan at a time: plans are a pure function of the state and the manifest), so the driver
 * never ships a plan per epoch to a task that lives for every epoch.
 */
record TrainInputs(Manifest manifest, long[] offsets, String startState, int endEpoch)
    implements Serializable {
  static TrainInputs of(Manifest manifest, String startState, int endEpoch) {
    return new TrainInputs(manifest, manifest.offsets(), startState, endEpoch);
  }
}
