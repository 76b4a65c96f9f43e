package dev.spindle.spark.image;

import dev.spindle.spark.plan.SplitMix64;

/**
 * The random stream of one sample: a pure function of (seed, epoch, sample index), so random crops
 * and flips do not depend on which thread runs the sample, or when, nor on the JDK. It is the
 * plan's SplitMix64 on stream 3 (package documentation, "Random operations").
 */
final class SampleRandom {
  private SampleRandom() {}

  static SplitMix64 of(long seed, long epoch, long sampleIndex) {
    return SplitMix64.stream(seed, epoch, SplitMix64.IMAGE_OPS, sampleIndex);
  }
}
