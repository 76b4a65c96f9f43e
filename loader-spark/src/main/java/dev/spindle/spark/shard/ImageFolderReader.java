package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Reads the files of an image-folder shard ({@code ROOT/<class>/…/<file>}) in manifest order; the
 * label is the class folder's index in the manifest's class names (torchvision's {@code
 * class_to_idx}: {@link FolderTree}), held to the same {@link LabelRule} as a tar's labels (below
 * {@code spark.spindle.numClasses} when that is set). A file that cannot be read or is too large
 * becomes a sample with a problem, so one bad file does not stop the shard.
 */
final class ImageFolderReader implements ShardReader {
  private final Shard shard;
  private final FileSystem fs;
  private final Path root;
  private final SampleLimits limits;
  private final int[] wanted; // positions to read, strictly increasing; null = every file
  private int nextWanted;
  private int position;

  /** A reader of only the files at {@code positions} (null = all); the others are never opened. */
  ImageFolderReader(Shard shard, Configuration conf, SampleLimits limits, int[] positions)
      throws IOException {
    this.shard = shard;
    this.root = new Path(shard.uri());
    this.fs = root.getFileSystem(conf);
    this.limits = limits;
    this.wanted = positions;
  }

  @Override
  public boolean hasNext() {
    if (wanted != null) {
      if (nextWanted >= wanted.length || wanted[nextWanted] >= shard.entries().size()) {
        return false;
      }
      position = wanted[nextWanted];
    }
    return position < shard.entries().size();
  }

  @Override
  public Sample next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more samples in " + shard.displayName());
    }
    nextWanted++;
    FolderEntry entry = shard.entries().get(position);
    SampleBuilder sample = new SampleBuilder(shard.uri(), entry.path(), position++, limits);
    String classFolder = entry.path().substring(0, entry.path().indexOf('/'));
    sample.label(entry.label(), "label " + entry.label() + " (class folder '" + classFolder + "')");
    try {
      Path file = new Path(root, entry.path());
      long length = fs.getFileStatus(file).getLen();
      if (length > limits.maxSampleBytes()) {
        sample.problem(
            String.format(
                "file is %d bytes, over spark.spindle.maxSampleBytes=%d",
                length, limits.maxSampleBytes()));
      } else {
        try (InputStream in = fs.open(file)) {
          sample.image(in.readNBytes((int) length), entry.path());
        }
      }
    } catch (IOException e) {
      if (Thread.currentThread().isInterrupted()) {
        throw new UncheckedIOException("Interrupted reading " + shard.uri(), e);
      }
      sample.problem("cannot read file: " + e.getMessage());
    }
    return sample.build();
  }

  @Override
  public void close() {
    position = shard.entries().size();
    nextWanted = wanted == null ? 0 : wanted.length;
  }
}
