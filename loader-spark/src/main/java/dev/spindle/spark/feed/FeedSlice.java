package dev.spindle.spark.feed;

import java.io.Serializable;

/**
 * A run of one rank's batches that one task produces: batches {@code [fromBatch, toBatch)} of
 * rank {@code rank} in the epoch plan of the job.
 */
record FeedSlice(int rank, int fromBatch, int toBatch) implements Serializable {}
