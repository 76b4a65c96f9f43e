package dev.spindle.spark.progress;

/** How a command shows its progress ({@code --progress}). */
public enum ProgressMode {
  /** A live line when stderr is a terminal, else a plain line every few seconds. */
  AUTO,
  /** A live line even when stderr is no terminal. */
  ALWAYS,
  /** Nothing. */
  NEVER
}
