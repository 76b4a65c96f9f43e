package dev.spindle.spark.pipeline;

import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * What the builder recorded for one stage. {@code op} is null except for pipes; {@code inputKey}
 * keys the stage's input items, {@code outputSize} sizes its output items (null: defaults); {@code
 * batchSize}, {@code remainder} and {@code ends} (null, or an item that closes its group early) are
 * for aggregates; {@code seqLabel} names positions ("item" before an aggregate, "batch" after).
 */
record StageSpec(
    String name,
    String kind,
    Op<Object, Object> op,
    int concurrency,
    Order order,
    boolean io,
    int batchSize,
    LastBatch remainder,
    FailureBudget budget,
    Function<Object, String> inputKey,
    ToLongFunction<Object> outputSize,
    String seqLabel,
    Predicate<Object> ends) {}
