package dev.spindle.spark.shard;

import java.io.UncheckedIOException;

/**
 * Checks each row read from a {@code preprocess} output's part file against where the manifest puts
 * it: the file stores the {@code index} column ascending from the manifest's {@code first_index} to
 * its {@code last_index} ({@link PartChecks}), so row {@code r} of a file of {@code n} rows holds
 * an index from {@code first + r} to {@code last − (n − 1 − r)}: exactly {@code first + r} when no
 * sample of its range was quarantined by the preprocess, and at least as far above the previous row
 * read as it is rows after it. A row elsewhere means the file is not the one the manifest lists
 * there (a reordered {@code files} list, another run's file under this name): the read fails naming
 * the file, the row, the index the manifest puts there and the one found. Without recorded checks
 * (a manifest of an earlier Spindle) it checks nothing. One per reader; its thread.
 */
final class StoredIndexCheck {
  private final Shard shard;
  private final PartChecks checks;
  private long lastRow = -1;
  private long lastIndex;

  StoredIndexCheck(Shard shard) {
    this.shard = shard;
    this.checks = shard.checks();
  }

  /**
   * @param row the row in the file, from 0
   * @param index the {@code index} it stores
   * @throws UncheckedIOException naming the file, the row and both indices when it is not where the
   *     manifest puts it
   */
  void check(long row, long index) {
    if (checks == null) {
      return;
    }
    long low = checks.firstIndex() + row;
    long high = checks.lastIndex() - (shard.samples() - 1 - row);
    boolean after = lastRow < 0 || index - lastIndex >= row - lastRow;
    if (index < low || index > high || !after) {
      throw new UncheckedIOException(
          StoredFiles.mismatch(
              shard.uri(),
              "its row "
                  + row
                  + " holds the stored index "
                  + index
                  + ", where the manifest puts "
                  + (low == high ? "index " + low : "an index from " + low + " to " + high)
                  + (after ? "" : " above the " + lastIndex + " of its row " + lastRow),
              "was the manifest's files list reordered, or this file replaced by another run's?"));
    }
    lastRow = row;
    lastIndex = index;
  }
}
