package dev.spindle.archfixture.upward.entry;

/** ArchitectureSuite's fixture: an entry point (like the command line). */
public final class Command {
  private Command() {}

  public static String name() {
    return "command";
  }
}
