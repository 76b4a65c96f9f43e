package dev.spindle.spark.progress;

import org.apache.spark.SparkContext;

/**
 * Names the Spark jobs the calling thread starts until {@link #close}: their job group and
 * description (shown by the UI and the history server) and, for {@link ProgressListener}, how many
 * samples the job will handle. Driver thread; restores the thread's former properties on close.
 */
public final class JobLabel implements AutoCloseable {
  /** The local property holding the job's total samples. */
  static final String TOTAL = "spindle.progress.total";

  /** The local property holding the progress line's label ({@code feed epoch 2/3}). */
  static final String LABEL = "spindle.progress.label";

  /** The local property holding the samples done before the job (a restarted run's). */
  static final String BEFORE = "spindle.progress.before";

  /**
   * The local property naming what the progress line counts per second: unset for images, {@code
   * samples} for a job whose samples have no image ({@link #withoutImages}).
   */
  static final String UNIT = "spindle.progress.unit";

  private static final String GROUP = "spark.jobGroup.id";
  private static final String DESCRIPTION = "spark.job.description";

  private final SparkContext sc;
  private final String[] before;

  /** {@code total} null: a helper job, which the progress line does not watch. */
  private JobLabel(SparkContext sc, String group, String label, String description, String total) {
    this.sc = sc;
    before =
        new String[] {
          sc.getLocalProperty(GROUP),
          sc.getLocalProperty(DESCRIPTION),
          sc.getLocalProperty(TOTAL),
          sc.getLocalProperty(LABEL),
          sc.getLocalProperty(BEFORE),
          sc.getLocalProperty(UNIT)
        };
    // SparkContext.setJobGroup's two properties; its third (interrupt on cancel) stays the caller's
    sc.setLocalProperty(GROUP, group);
    sc.setLocalProperty(DESCRIPTION, description);
    sc.setLocalProperty(TOTAL, total);
    sc.setLocalProperty(LABEL, label);
    sc.setLocalProperty(BEFORE, null);
    sc.setLocalProperty(UNIT, null);
  }

  /**
   * Labels the jobs that follow with {@code group} (e.g. {@code spindle-preprocess-<job id>}),
   * {@code description} (the UI's) and {@code label} (the progress line's, short); {@code total}
   * samples, or 0 when unknown.
   */
  public static JobLabel of(
      SparkContext sc, String group, String label, String description, long total) {
    return new JobLabel(sc, group, label, description, Long.toString(Math.max(total, 0)));
  }

  /**
   * Labels the helper jobs that follow (counting shards, say) with {@code description}, in the
   * calling thread's job group when it has one (so the UI shows them with the job they serve), else
   * in {@code spindle-helper}. The progress line ignores them: a label's count goes on across its
   * helper jobs.
   */
  public static JobLabel helper(SparkContext sc, String description) {
    String group = sc.getLocalProperty(GROUP);
    return new JobLabel(sc, group != null ? group : "spindle-helper", null, description, null);
  }

  /**
   * The jobs that follow continue the work of earlier ones: {@code samples} of the total are
   * already done (a restarted {@code train} run, from its ranks' saved states), so the count starts
   * there instead of at 0.
   */
  public void continuing(long samples) {
    sc.setLocalProperty(BEFORE, Long.toString(Math.max(samples, 0)));
  }

  /**
   * The labelled jobs' samples have no image (their declared fields have none): the progress line
   * says {@code samples/s}, not {@code images/s}. Returns this label.
   */
  public JobLabel withoutImages() {
    sc.setLocalProperty(UNIT, "samples");
    return this;
  }

  /**
   * Inside a label whose total was unknown (0), the jobs the calling thread starts next will handle
   * {@code total} samples: a {@code spindle} DataSource scan says so when Spark plans it, just
   * before its job starts on that thread. Outside a label, nothing: a query in a user's program
   * keeps the thread's properties as they were. The label's {@link #close} restores them.
   */
  public static void totalIfUnknown(SparkContext sc, long total) {
    if (sc.getLocalProperty(LABEL) != null && "0".equals(sc.getLocalProperty(TOTAL))) {
      sc.setLocalProperty(TOTAL, Long.toString(Math.max(total, 0)));
    }
  }

  @Override
  public void close() {
    sc.setLocalProperty(GROUP, before[0]);
    sc.setLocalProperty(DESCRIPTION, before[1]);
    sc.setLocalProperty(TOTAL, before[2]);
    sc.setLocalProperty(LABEL, before[3]);
    sc.setLocalProperty(BEFORE, before[4]);
    sc.setLocalProperty(UNIT, before[5]);
  }
}
