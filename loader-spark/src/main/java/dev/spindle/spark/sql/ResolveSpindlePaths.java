package dev.spindle.spark.sql;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * Resolves {@code spindle.`uri`} in SQL ({@code SELECT ... FROM spindle.`/data/shards`}, with
 * optional {@code WITH ('size' = '128')} options) to a scan of the {@code spindle} data source, as
 * {@code spark.read.format("spindle").load(uri)} would.
 *
 * <p>Why a rule of its own: Spark's rule for SQL on files ({@code ResolveSQLOnFile}) accepts only
 * {@code FileFormat} sources; for any other provider, a DataSource V2 {@code TableProvider} such as
 * this one, it fails the query ({@code UNSUPPORTED_DATASOURCE_FOR_DIRECT_QUERY}) in the analyzer's
 * resolution batch, before rules injected there can run. So {@link SpindleExtensions} injects this
 * one into the earlier hint-resolution batch. It claims only a two-part name whose first part is
 * {@code spindle}, and only while {@code spindle} is neither a database of the session catalog nor
 * a configured catalog ({@code spark.sql.catalog.spindle}). Analyzer thread.
 */
final class ResolveSpindlePaths extends Rule<LogicalPlan> {
  private final SparkSession session;

  ResolveSpindlePaths(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return plan.resolveOperatorsUp(
        new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
          @Override
          public boolean isDefinedAt(LogicalPlan p) {
            return path(p) != null;
          }

          @Override
          public LogicalPlan apply(LogicalPlan p) {
            return relation((UnresolvedRelation) p, path(p));
          }
        });
  }

  /** The URI {@code p} reads through this source, or null when it is something else. */
  private String path(LogicalPlan p) {
    if (!(p instanceof UnresolvedRelation u) || u.isStreaming()) {
      return null;
    }
    List<String> parts = CollectionConverters.asJava(u.multipartIdentifier());
    if (parts.size() != 2 || !parts.get(0).equalsIgnoreCase(SpindleDataSource.NAME)) {
      return null;
    }
    boolean taken =
        session.conf().contains("spark.sql.catalog." + parts.get(0))
            || session.catalog().databaseExists(parts.get(0));
    return taken ? null : parts.get(1);
  }

  private static LogicalPlan relation(UnresolvedRelation u, String path) {
    Map<String, String> options = new HashMap<>(u.options().asCaseSensitiveMap());
    options.put(ScanOptions.PATH, path);
    CaseInsensitiveStringMap caseless = new CaseInsensitiveStringMap(options);
    SpindleDataSource source = new SpindleDataSource();
    Table table = source.getTable(source.inferSchema(caseless), new Transform[0], options);
    return DataSourceV2Relation.create(
        table, Option.empty(), Option.empty(), caseless, Option.empty());
  }
}
