package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import java.util.ListResourceBundle;

/**
 * The defaults of the {@code spark.spindle.*} keys as a resource bundle, so help texts write {@code
 * ${bundle:spark.spindle.batchSize}} and show the key's own default. Public only because {@link
 * java.util.ResourceBundle} instantiates it; not API.
 */
public final class KeyDefaults extends ListResourceBundle {
  static final String NAME = "dev.spindle.spark.cli.KeyDefaults";

  @Override
  protected Object[][] getContents() {
    return SpindleConfig.keys().stream()
        .map(k -> new Object[] {k.key(), k.defaultValue()})
        .toArray(Object[][]::new);
  }
}
