package dev.spindle.spark.serve;

import dev.spindle.spark.samples.IndexedSample;
import dev.spindle.spark.samples.RowTarget;
import dev.spindle.spark.shard.Sample;

/**
 * One planned row on its way through a feed task's pipeline: which rank's batch and row it fills,
 * its planned dataset index, the encoded sample read for it (a sample with a problem when it could
 * not be read), the batch it is decoded into ({@code into}: row {@code row} of it), and whether it
 * is its batch's last row ({@code last}: a token budget's batches vary in rows). Immutable; passed
 * from the reading thread to a decode thread.
 */
record Row(int rank, int batch, int row, long index, Sample sample, BatchTarget into, boolean last)
    implements IndexedSample {
  @Override
  public boolean endsBatch() {
    return last;
  }

  @Override
  public RowTarget target() {
    return into.row(row);
  }

  @Override
  public Row withoutImage() {
    return new Row(rank, batch, row, index, sample.withoutImage(), into, last);
  }

  String describe() {
    return sample.shard() + " [" + sample.key() + "]";
  }

  @Override
  public String id() {
    return describe();
  }

  @Override
  public long bytes() {
    return (sample.image() == null ? 0 : sample.image().length) + sample.fieldBytes();
  }
}
