package dev.spindle.spark.cli;

import dev.spindle.spark.progress.ProgressMode;
import dev.spindle.spark.progress.ProgressPrinter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --progress} and {@code --progress-interval}: how a long command shows its progress on
 * stderr. Whether stderr is a terminal comes from the launcher ({@code -Dspindle.stderr.terminal},
 * {@code -Dspindle.stderr.columns}): the JVM cannot tell, and {@code bin/spindle} filters stderr.
 */
final class ProgressFlags {
  /** How often executors report running tasks' counters when progress is shown. */
  static final String HEARTBEAT = "spark.executor.heartbeatInterval";

  @Option(
      names = "--progress",
      paramLabel = "auto|always|never",
      converter = Mode.class,
      description =
          "Progress on stderr: a live line on a terminal, else a plain line every"
              + " --progress-interval seconds (auto, the default); a live line anyway (always);"
              + " none (never)")
  ProgressMode mode = ProgressMode.AUTO;

  @Option(
      names = "--progress-interval",
      paramLabel = "SECONDS",
      converter = Converters.PositiveInt.class,
      description = "Seconds between plain progress lines (default ${DEFAULT-VALUE})")
  int interval = 10;

  /**
   * {@code settings} plus what progress needs: executors report running tasks every 2 s unless the
   * user set {@value #HEARTBEAT}.
   */
  Map<String, String> with(Map<String, String> settings) {
    Map<String, String> s = new LinkedHashMap<>(settings);
    if (mode != ProgressMode.NEVER && System.getProperty(HEARTBEAT) == null) {
      s.putIfAbsent(HEARTBEAT, "2s");
    }
    return s;
  }

  /** Starts showing the progress of {@code session}'s jobs; close it before the summary. */
  ProgressPrinter start(SparkSession session) {
    return ProgressPrinter.start(
        session.sparkContext(),
        mode,
        Boolean.getBoolean("spindle.stderr.terminal"),
        Integer.getInteger("spindle.stderr.columns", 0),
        Duration.ofSeconds(interval));
  }

  /** auto, always or never, in any case. */
  static final class Mode implements ITypeConverter<ProgressMode> {
    @Override
    public ProgressMode convert(String value) {
      try {
        return ProgressMode.valueOf(value.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException("'" + value + "' (must be auto, always or never)");
      }
    }
  }
}
