package dev.spindle.spark.pipeline;

import java.util.List;

/**
 * The one error a pipeline's consumer gets when the pipeline stops on a failure: a stage exceeded
 * its {@link FailureBudget}, an op threw an {@link Error}, or the source threw.
 *
 * <p>The message names the stage and lists the first causes; {@link #causes()} returns them (the
 * first is also {@link #getCause()}), and {@link #quarantine()} the items dropped before the stop.
 * Thrown on the consumer's thread by {@code hasNext()}/{@code next()}; immutable.
 */
public final class PipelineFailure extends RuntimeException {
  private final String stage;
  private final List<Throwable> causes;
  private final List<QuarantineEntry> quarantine;

  PipelineFailure(
      String stage, String message, List<Throwable> causes, List<QuarantineEntry> quarantine) {
    super(message, causes.isEmpty() ? null : causes.get(0));
    this.stage = stage;
    this.causes = List.copyOf(causes);
    this.quarantine = List.copyOf(quarantine);
  }

  /** The stage that stopped the pipeline. */
  public String stage() {
    return stage;
  }

  /** The first causes, oldest first (at most {@value RunState#MAX_CAUSES}). */
  public List<Throwable> causes() {
    return causes;
  }

  /** Items dropped before the stop, across all stages. */
  public List<QuarantineEntry> quarantine() {
    return quarantine;
  }
}
