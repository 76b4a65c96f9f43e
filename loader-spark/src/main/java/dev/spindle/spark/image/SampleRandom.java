package dev.spindle.spark.image;

import java.util.SplittableRandom;

/**
 * The random stream of one sample: a pure function of (seed, epoch, sample index), so random crops
 * and flips do not depend on which thread runs the sample, or when.
 */
final class SampleRandom {
  private SampleRandom() {}

  static SplittableRandom of(long seed, long epoch, long sampleIndex) {
    long h = mix(seed ^ 0x9E3779B97F4A7C15L);
    h = mix(h ^ epoch);
    h = mix(h ^ sampleIndex);
    return new SplittableRandom(h);
  }

  /** SplitMix64's finaliser (Stafford variant 13). */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
