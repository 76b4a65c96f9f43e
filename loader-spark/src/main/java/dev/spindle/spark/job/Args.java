package dev.spindle.spark.job;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Parsed command-line flags of one command: {@code --flag value}, {@code --flag=value}, boolean
 * {@code --flag}, and repeated {@code --conf key=value}. Unknown flags and missing values fail
 * with a message that names them and lists what the command accepts.
 */
public final class Args {
  private final String command;
  private final Map<String, String> values = new LinkedHashMap<>();
  private final Map<String, String> confs = new LinkedHashMap<>();

  private Args(String command) {
    this.command = command;
  }

  public static Args parse(
      String command, String[] argv, Set<String> valueFlags, Set<String> booleanFlags) {
    Args args = new Args(command);
    for (int i = 0; i < argv.length; i++) {
      String arg = argv[i];
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      if (booleanFlags.contains(arg)) {
        args.values.put(arg, value == null ? "true" : value);
        continue;
      }
      if (!valueFlags.contains(arg) && !arg.equals("--conf")) {
        throw new UsageException(
            "Unknown flag for '" + command + "': " + arg + "; accepted: " + accepted(valueFlags, booleanFlags));
      }
      if (value == null) {
        if (i + 1 >= argv.length) {
          throw new UsageException("Flag " + arg + " of '" + command + "' needs a value");
        }
        value = argv[++i];
      }
      if (arg.equals("--conf")) {
        int sep = value.indexOf('=');
        if (sep <= 0) {
          throw new UsageException("--conf takes key=value, got '" + value + "'");
        }
        args.confs.put(value.substring(0, sep).trim(), value.substring(sep + 1).trim());
      } else {
        args.values.put(arg, value);
      }
    }
    return args;
  }

  private static String accepted(Set<String> valueFlags, Set<String> booleanFlags) {
    Set<String> all = new TreeSet<>(valueFlags);
    all.addAll(booleanFlags);
    all.add("--conf");
    return String.join(" ", all);
  }

  public String get(String flag) {
    return values.get(flag);
  }

  String get(String flag, String defaultValue) {
    return values.getOrDefault(flag, defaultValue);
  }

  String require(String flag) {
    String v = values.get(flag);
    if (v == null || v.isBlank()) {
      throw new UsageException("'" + command + "' needs " + flag);
    }
    return v;
  }

  boolean has(String flag) {
    return Boolean.parseBoolean(values.getOrDefault(flag, "false"));
  }

  int intValue(String flag, int defaultValue, int min) {
    String v = values.get(flag);
    if (v == null) {
      return defaultValue;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n < min) {
        throw new UsageException("Invalid " + flag + ": " + v + " (must be >= " + min + ")");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new UsageException("Invalid " + flag + ": '" + v + "' (not an integer)");
    }
  }

  long longValue(String flag, long defaultValue) {
    String v = values.get(flag);
    try {
      return v == null ? defaultValue : Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException("Invalid " + flag + ": '" + v + "' (not an integer)");
    }
  }

  /** {@code --conf} pairs plus flags that stand for configuration keys. */
  public Map<String, String> confs() {
    return confs;
  }

  List<String> flags() {
    return new ArrayList<>(values.keySet());
  }

  /** A command-line mistake: printed with the usage, exit code 2. */
  public static final class UsageException extends IllegalArgumentException {
    public UsageException(String message) {
      super(message);
    }
  }
}
