/**
 * The command line, {@code bin/spindle <command>} (and {@code spark-submit} of the shaded jar
 * without {@code --class}): picocli commands over the public API ({@link dev.spindle.Spindle}) and
 * the jobs' own entry points. It parses and checks flags, builds the session a command runs on,
 * calls the job, prints its one-line summary and writes its report; it holds no job logic.
 *
 * <pre>
 *  argv ─► SpindleMain (picocli: parse, typed options, usage; a mistyped flag is named with the
 *          closest one) ─► a command's call():
 *            JobConf: --properties-file &lt; --conf &lt; flags, every spark.spindle.* key known and
 *            every value checked
 *            ─► Jobs.run: Preflight (input, output, --report ... on the driver, no session yet)
 *               ─► Sessions.start (embedded local[*] on 127.0.0.1, --master, or spark-submit's)
 *               ─► ProgressFlags: ProgressPrinter (live line / plain lines on stderr, erased
 *               first) ─► Spindle.preprocess / feed ... run() ─► session stopped
 *            ─► Summary line, --report FILE (Errors: also for a failed or interrupted job)
 *  exit code: 0 done, 1 the job failed, 2 a usage error (unknown flag or key, bad value, missing
 *             flag), 130 interrupted by the user (Interruption: Ctrl-C cancels the job, which
 *             cleans up as a failed one does)
 * </pre>
 *
 * <p>{@code feed} and {@code train} are one {@link dev.spindle.spark.cli.FeedRunCommand} each (the
 * input, plan and resume flags, and running on a session of their own or the caller's) with their
 * own flags; both take the trainer bridge's {@link dev.spindle.spark.cli.BridgeFlags}.
 *
 * <p>Everything here runs on the main thread.
 */
package dev.spindle.spark.cli;
