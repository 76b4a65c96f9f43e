package dev.spindle.spark.sql;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.SparkSessionExtensionsProvider;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Adds {@code SELECT ... FROM spindle.`uri`} to every SparkSession whose classpath holds Spindle:
 * Spark loads {@code SparkSessionExtensionsProvider} services when it builds a session, so no
 * {@code spark.sql.extensions} setting is needed (it may still name this class). Injects {@link
 * ResolveSpindlePaths}. Instantiated by Spark; stateless.
 */
public final class SpindleExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit>
    implements SparkSessionExtensionsProvider {

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectHintResolutionRule(
        new AbstractFunction1<>() {
          @Override
          public ResolveSpindlePaths apply(org.apache.spark.sql.SparkSession session) {
            return new ResolveSpindlePaths(session);
          }
        });
    return BoxedUnit.UNIT;
  }
}
