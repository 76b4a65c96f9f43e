package dev.spindle.archfixture.cycle.b;

import dev.spindle.archfixture.cycle.a.Left;

/** ArchitectureSuite's fixture: the other half of a package cycle, b → a. */
public final class Right {
  private Right() {}

  public static int once(int x) {
    return x < 0 ? Left.twice(-x) : x;
  }
}
