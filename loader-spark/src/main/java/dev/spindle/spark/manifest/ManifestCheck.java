package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of comparing a cached manifest with a fresh listing of the same input, by each file's
 * size and modification time: which shards changed, which files are new. The caller either refuses
 * the cached manifest ({@link #requireUnchanged()}) or re-counts {@link #shardsToRecount()}
 * (re-listing the input when {@link #needsRelist()}).
 *
 * <p>Immutable once built; any thread. The listing should hold the files the catalog would take as
 * data (the manifest file itself and other side files left out).
 */
public final class ManifestCheck {
  /** How a shard differs from what the manifest recorded. */
  public enum Kind {
    /** The shard (or one of a folder shard's files) is gone. */
    MISSING,
    /** Its size (a folder shard's total size) differs. */
    SIZE_CHANGED,
    /** Same size, but its (newest) modification time differs. */
    MODIFIED
  }

  /**
   * One changed shard.
   *
   * @param shard the shard's index in the cached manifest
   * @param name the shard's display name
   * @param kind what changed
   * @param detail recorded and found values, for messages
   */
  public record ShardChange(int shard, String name, Kind kind, String detail) {
    @Override
    public String toString() {
      return name + ": " + detail;
    }
  }

  private static final int MESSAGE_LIMIT = 10;

  private final String input;
  private final List<ShardChange> changes;
  private final List<String> addedFiles;

  private ManifestCheck(String input, List<ShardChange> changes, List<String> addedFiles) {
    this.input = input;
    this.changes = List.copyOf(changes);
    this.addedFiles = List.copyOf(addedFiles);
  }

  /** Compares every shard of {@code cached} with {@code listing}. */
  public static ManifestCheck compare(Manifest cached, Collection<FileFacts> listing) {
    Map<String, FileFacts> unmatched = new HashMap<>(listing.size() * 2);
    for (FileFacts f : listing) {
      unmatched.put(f.uri(), f);
    }
    List<ShardChange> changes = new ArrayList<>();
    for (int i = 0; i < cached.shards().size(); i++) {
      Shard shard = cached.shards().get(i);
      ShardChange change =
          shard.format() == ShardFormat.TAR || shard.entries().isEmpty()
              ? compareFile(i, shard, unmatched.remove(shard.uri()))
              : compareFolder(i, shard, unmatched);
      if (change != null) {
        changes.add(change);
      }
    }
    List<String> added = new ArrayList<>(unmatched.keySet());
    added.sort(null);
    return new ManifestCheck(cached.input(), changes, added);
  }

  private static ShardChange compareFile(int index, Shard shard, FileFacts found) {
    if (found == null) {
      return new ShardChange(index, shard.displayName(), Kind.MISSING, "missing");
    }
    return compareFacts(index, shard, found.bytes(), found.modificationTime());
  }

  private static ShardChange compareFolder(
      int index, Shard shard, Map<String, FileFacts> unmatched) {
    long bytes = 0;
    long newest = Long.MIN_VALUE;
    int missing = 0;
    String firstMissing = null;
    for (FolderEntry entry : shard.entries()) {
      FileFacts found = unmatched.remove(join(shard.uri(), entry.path()));
      if (found == null) {
        missing++;
        firstMissing = firstMissing == null ? entry.path() : firstMissing;
        continue;
      }
      bytes += found.bytes();
      newest = Math.max(newest, found.modificationTime());
    }
    if (missing > 0) {
      return new ShardChange(
          index,
          shard.displayName(),
          Kind.MISSING,
          missing + " of " + shard.entries().size() + " files missing, first " + firstMissing);
    }
    return compareFacts(index, shard, bytes, newest);
  }

  private static ShardChange compareFacts(int index, Shard shard, long bytes, long modified) {
    if (bytes != shard.bytes()) {
      return new ShardChange(
          index,
          shard.displayName(),
          Kind.SIZE_CHANGED,
          "size " + shard.bytes() + " → " + bytes + " bytes");
    }
    if (modified != shard.modificationTime()) {
      return new ShardChange(
          index,
          shard.displayName(),
          Kind.MODIFIED,
          "modified " + shard.modificationTime() + " → " + modified + " (ms since the epoch)");
    }
    return null;
  }

  /** A folder shard's file URI: its root and the entry's relative path, joined by one '/'. */
  public static String join(String root, String path) {
    return root.endsWith("/") ? root + path : root + "/" + path;
  }

  /** True when every shard matches and no file was added. */
  public boolean unchanged() {
    return changes.isEmpty() && addedFiles.isEmpty();
  }

  /** Changed shards, in manifest order. */
  public List<ShardChange> changes() {
    return changes;
  }

  /** Files in the listing that belong to no shard, sorted. */
  public List<String> addedFiles() {
    return addedFiles;
  }

  /** True when shards are gone or files were added: the shard list itself must be rebuilt. */
  public boolean needsRelist() {
    return !addedFiles.isEmpty() || changes.stream().anyMatch(c -> c.kind() == Kind.MISSING);
  }

  /** Indices of the shards that still exist but changed, in manifest order. */
  public int[] shardsToRecount() {
    return changes.stream()
        .filter(c -> c.kind() != Kind.MISSING)
        .mapToInt(ShardChange::shard)
        .toArray();
  }

  /** Throws {@link IllegalStateException} listing the first changes unless {@link #unchanged()}. */
  public void requireUnchanged() {
    if (!unchanged()) {
      throw new IllegalStateException(describe());
    }
  }

  /** One line for logs and errors. */
  public String describe() {
    if (unchanged()) {
      return "The shards of " + input + " match the manifest";
    }
    StringBuilder b =
        new StringBuilder("The data changed since the manifest of ")
            .append(input)
            .append(" was written (")
            .append(changes.size())
            .append(" shards changed, ")
            .append(addedFiles.size())
            .append(" files added)");
    List<String> items = new ArrayList<>();
    changes.stream().limit(MESSAGE_LIMIT).forEach(c -> items.add(c.toString()));
    addedFiles.stream().limit(MESSAGE_LIMIT).forEach(f -> items.add(f + ": added"));
    b.append(": ").append(String.join("; ", items));
    if (changes.size() > MESSAGE_LIMIT || addedFiles.size() > MESSAGE_LIMIT) {
      b.append("; …");
    }
    return b.append(". Re-count the shards or delete the cached manifest.").toString();
  }
}
