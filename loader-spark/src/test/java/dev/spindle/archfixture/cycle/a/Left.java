package dev.spindle.archfixture.cycle.a;

import dev.spindle.archfixture.cycle.b.Right;

/** ArchitectureSuite's fixture: one half of a package cycle, a → b. */
public final class Left {
  private Left() {}

  public static int twice(int x) {
    return Right.once(x) * 2;
  }
}
