/**
 * Arrow batches: the schema of Spindle's output and the reusable batch decoders write into.
 *
 * <p>Enters: pixels written by decode threads straight into {@link
 * dev.spindle.spark.batch.ImageBatch#imageData()} (each thread its own rows), then labels, keys and
 * indices set by the task thread. Leaves: a sealed {@link org.apache.arrow.vector.VectorSchemaRoot}
 * with the columns {@code image} ({@code arrow.fixed_shape_tensor}, uint8 H×W×C), {@code label},
 * {@code key}, {@code index}, then one column per extra field a job declares ({@link
 * dev.spindle.spark.batch.FieldSpec}, {@code spark.spindle.fields}: Int, FloatingPoint, Utf8,
 * Binary or List, set per row by the task thread and written when the batch is sealed). Memory
 * comes from the executor's one root allocator ({@link dev.spindle.spark.batch.ExecutorAllocator})
 * through a named child per task; closing the child fails if a buffer leaked.
 */
package dev.spindle.spark.batch;
