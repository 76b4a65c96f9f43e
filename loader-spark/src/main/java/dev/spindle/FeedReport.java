package dev.spindle;

import dev.spindle.spark.metrics.JobReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

/**
 * The report of a {@code feed} run (see {@link Report}): per rank and epoch what was delivered, and
 * the loader state to resume from. A snapshot the caller owns.
 */
public final class FeedReport extends Report {
  private final String state;

  FeedReport(JobReport report, String stateJson) {
    super(report);
    this.state = stateJson;
  }

  /**
   * One rank's share of one epoch (leg) of the run.
   *
   * @param rank the trainer rank
   * @param epoch the epoch
   * @param batches batches delivered to the rank
   * @param samples real samples in them (padding excluded)
   * @param digest SHA-256 of the planned sample indices, equal for every run of the same plan
   */
  public record Rank(int rank, int epoch, long batches, long samples, String digest) {}

  /**
   * Image bytes copied on the host per delivered sample, in units of one sample's image bytes
   * ({@code host_copies_per_sample}): 0 when every image was decoded straight into the batch it was
   * delivered in (tar, image folder and Parquet inputs), 2 for a preprocess output (each stored
   * image copied by its reader out of the file's buffer, then into its row); empty when nothing was
   * delivered.
   */
  public java.util.OptionalDouble hostCopiesPerSample() {
    Object v = get("host_copies_per_sample");
    return v instanceof Number n
        ? java.util.OptionalDouble.of(n.doubleValue())
        : java.util.OptionalDouble.empty();
  }

  /** Every rank's result of every epoch the run delivered, in the order they completed. */
  @SuppressWarnings("unchecked")
  public List<Rank> ranks() {
    Object ranks = fields().get("ranks");
    if (!(ranks instanceof List<?> list)) {
      return List.of();
    }
    return list.stream()
        .map(o -> (Map<String, Object>) o)
        .map(
            m ->
                new Rank(
                    ((Number) m.get("rank")).intValue(),
                    ((Number) m.get("epoch")).intValue(),
                    ((Number) m.get("batches")).longValue(),
                    ((Number) m.get("samples")).longValue(),
                    (String) m.get("digest")))
        .toList();
  }

  /** The loader state after the run as JSON: pass it to {@code Feed.resume} to continue. */
  public String loaderState() {
    return state;
  }

  /** Writes {@link #loaderState()} to {@code file} atomically (parent folders are created). */
  public void saveState(Path file) throws IOException {
    Path path = file.toAbsolutePath();
    Files.createDirectories(path.getParent());
    Path temp = path.resolveSibling(path.getFileName() + ".tmp");
    Files.writeString(temp, state + "\n");
    Files.move(temp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
