package dev.spindle.spark.sql;

import java.util.Arrays;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * An input read through the {@code spindle} data source, with its settings resolved. Batch reads
 * only. Immutable; driver.
 */
final class SpindleTable implements SupportsRead {
  private final ScanSettings settings;
  private final String refused;

  /**
   * @param refused why a scan of the table is refused (a catalog table's unknown option), or null
   */
  SpindleTable(ScanSettings settings, String refused) {
    this.settings = settings;
    this.refused = refused;
  }

  @Override
  public String name() {
    return "spindle.`" + settings.input() + "`";
  }

  @Override
  public Column[] columns() {
    return Arrays.stream(ScanSchema.of(settings).fields())
        .map(f -> Column.create(f.name(), f.dataType(), f.nullable()))
        .toArray(Column[]::new);
  }

  @Override
  public Set<TableCapability> capabilities() {
    return Set.of(TableCapability.BATCH_READ);
  }

  /**
   * The options were resolved with the table; a scan's own options add nothing.
   *
   * @throws IllegalArgumentException when the table's options hold an unknown one
   */
  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (refused != null) {
      throw new IllegalArgumentException(refused);
    }
    return new SpindleScanBuilder(settings);
  }
}
