package dev.spindle.spark.pipeline;

/** An item in flight: the item, its position in the source (or batch number), its byte size. */
record Entry(Object item, long seq, long bytes) {}
