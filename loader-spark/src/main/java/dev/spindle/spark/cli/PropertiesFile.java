package dev.spindle.spark.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * {@code --properties-file FILE}, as spark-submit reads it: the {@code spark.*} settings of a file
 * such as {@code conf/examples/preprocess.conf}; other keys are ignored, as spark-submit does.
 */
final class PropertiesFile {
  private PropertiesFile() {}

  /**
   * The file's {@code spark.*} settings, values trimmed.
   *
   * @throws IllegalArgumentException naming the file when there is none
   */
  static Map<String, String> read(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("--properties-file " + file + ": no such file");
    }
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(in);
    }
    Map<String, String> settings = new LinkedHashMap<>();
    p.stringPropertyNames().stream()
        .filter(k -> k.startsWith("spark."))
        .sorted()
        .forEach(k -> settings.put(k, p.getProperty(k).trim()));
    return settings;
  }
}
