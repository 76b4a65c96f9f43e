package dev.spindle.archfixture.upward.flow;

import dev.spindle.archfixture.upward.entry.Command;

/** ArchitectureSuite's fixture: a flow class that imports an entry point, as none may. */
public final class Reader {
  private Reader() {}

  public static String caller() {
    return Command.name();
  }
}
