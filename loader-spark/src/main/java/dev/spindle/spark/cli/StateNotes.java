package dev.spindle.spark.cli;

import dev.spindle.spark.plan.LoaderState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What a {@code feed} or {@code train} run did with loader states, for its summary line: where it
 * resumed, where it stopped, where it wrote the state. Main thread.
 */
final class StateNotes {
  private StateNotes() {}

  /**
   * @param resumed the state given to {@code --resume} and its file, or nulls
   * @param stopAfter {@code --stop-after-batches}, or 0
   * @param saved the {@code --save-state} file, or null
   */
  static List<String> of(
      LoaderState resumed,
      Path resumeFile,
      int stopAfter,
      Path saved,
      Map<String, Object> report,
      LoaderState end) {
    List<String> notes = new ArrayList<>();
    if (resumed != null) {
      notes.add("resumed at " + position(resumed) + " from " + resumeFile);
    }
    if (stopAfter > 0 && Boolean.TRUE.equals(report.get("stopped_early"))) {
      notes.add("stopped after " + stopAfter + " batches per rank, next: " + position(end));
    }
    if (saved != null) {
      notes.add("state written to " + saved);
    }
    return notes;
  }

  /** {@code epoch 1, batch 2} (or {@code batches [2, 3]} when the ranks differ). */
  static String position(LoaderState s) {
    int[] b = s.batchesConsumed();
    boolean same = Arrays.stream(b).allMatch(x -> x == b[0]);
    return "epoch "
        + s.epoch()
        + ", "
        + (b.length == 0 ? "batch 0" : same ? "batch " + b[0] : "batches " + Arrays.toString(b));
  }
}
