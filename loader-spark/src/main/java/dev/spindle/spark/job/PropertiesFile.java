package dev.spindle.spark.job;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * {@code --properties-file FILE}, as spark-submit reads it: {@code spark.*} settings from a file
 * (e.g. {@code conf/examples/preprocess.conf}) become system properties, which the job's SparkConf
 * loads; CLI flags and {@code --conf} still win because they are applied on top.
 */
final class PropertiesFile {
  private PropertiesFile() {}

  /** Loads every {@code --properties-file} and returns the remaining arguments. */
  static String[] apply(String[] argv) throws IOException {
    List<String> rest = new ArrayList<>();
    for (int i = 0; i < argv.length; i++) {
      String arg = argv[i];
      if (arg.equals("--properties-file") || arg.startsWith("--properties-file=")) {
        String file = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : next(argv, ++i);
        load(Path.of(file));
      } else {
        rest.add(arg);
      }
    }
    return rest.toArray(new String[0]);
  }

  private static String next(String[] argv, int i) {
    if (i >= argv.length) {
      throw new Args.UsageException("--properties-file needs a file");
    }
    return argv[i];
  }

  static Properties read(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new Args.UsageException("--properties-file " + file + ": no such file");
    }
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(in);
    }
    return p;
  }

  private static void load(Path file) throws IOException {
    Properties p = read(file);
    for (String key : p.stringPropertyNames()) {
      if (key.startsWith("spark.")) {
        System.setProperty(key, p.getProperty(key).trim());
      }
    }
  }
}
