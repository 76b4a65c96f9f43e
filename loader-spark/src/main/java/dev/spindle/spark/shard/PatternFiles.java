package dev.spindle.spark.shard;

import dev.spindle.spark.pipeline.ExecutorPools;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * The size and modification time of each file a brace pattern names ({@link PatternInput}), as a
 * cached manifest's change check needs them, found by listing the folders the names fall in rather
 * than asking for each file's status: an object store lists 1,000 entries per request (S3, GCS,
 * Azure; HDFS's {@code dfs.ls.limit} is 1,000 too), where a status is a request per file.
 *
 * <p>The rule: each distinct folder of the names is listed ({@code listStatusIterator}, page by
 * page), and its entries are matched by name; the listing stops as soon as every name of that
 * folder was found. A folder that holds far more files than the pattern names there costs more to
 * list than to ask about each name: once its listing has returned {@value #ENTRIES_PER_NAME}
 * entries per name of the pattern in it (as many pages as a status request per name would be
 * requests) and names are still unmatched, those names are looked at one by one ({@code
 * getFileStatus}). So a folder costs at most twice the requests of the cheaper way, and a million
 * names in a thousand-file-a-page folder cost about a thousand requests, not a million.
 *
 * <p>Folders are looked at {@value #THREADS} at a time (as Hadoop's {@code
 * mapreduce.input.fileinputformat.list-status.num-threads} lists input folders): an object store
 * answers each request in tens of milliseconds, so a thousand folders one after another would take
 * a minute. Called from the driver thread; stateless.
 */
public final class PatternFiles {
  /** Entries a folder's listing may return per pattern name in it before names are stat'ed. */
  public static final int ENTRIES_PER_NAME = 1000;

  /** Folders looked at at once. */
  public static final int THREADS = 16;

  /**
   * What was found and what it cost.
   *
   * @param files one per name, in the order asked: its size and modification time (samples -1), or
   *     refused ("does not exist", "is a folder")
   * @param foldersListed folders whose listing was started
   * @param entriesListed entries those listings returned
   * @param filesStatted names looked at one by one, after a listing ran past its budget
   */
  public record Looked(
      List<FileCount> files, int foldersListed, long entriesListed, int filesStatted) {}

  private PatternFiles() {}

  /** Looks at the named files ({@link PatternInput#uris()}) folder by folder. */
  public static Looked look(List<String> uris, Configuration conf) throws IOException {
    return look(uris, conf, ENTRIES_PER_NAME);
  }

  static Looked look(List<String> uris, Configuration conf, int entriesPerName) throws IOException {
    // by text, not by Path: a million names parsed as URIs would cost the driver seconds
    Map<String, Map<String, String>> folders = new LinkedHashMap<>();
    for (String uri : uris) {
      int slash = uri.lastIndexOf('/');
      folders
          .computeIfAbsent(uri.substring(0, slash + 1), p -> new HashMap<>())
          .put(uri.substring(slash + 1), uri);
    }
    Map<String, FileCount> found = new ConcurrentHashMap<>(uris.size() * 2);
    long entries = 0;
    int statted = 0;
    for (Folder folder : lookAll(folders, found, conf, entriesPerName)) {
      entries += folder.entries;
      statted += folder.statted;
    }
    List<FileCount> files = new ArrayList<>(uris.size());
    for (String uri : uris) {
      FileCount f = found.get(uri);
      files.add(f != null ? f : FileCount.refused(uri, uri + " does not exist"));
    }
    return new Looked(files, folders.size(), entries, statted);
  }

  /** What one folder's look cost. */
  private record Folder(long entries, int statted) {}

  /** Each folder on a pool of at most {@link #THREADS}; the first failure fails the look. */
  private static List<Folder> lookAll(
      Map<String, Map<String, String>> folders,
      Map<String, FileCount> found,
      Configuration conf,
      int entriesPerName)
      throws IOException {
    if (folders.size() == 1) {
      Map.Entry<String, Map<String, String>> only = folders.entrySet().iterator().next();
      return List.of(lookAt(only.getKey(), only.getValue(), found, conf, entriesPerName));
    }
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.min(THREADS, folders.size()), ExecutorPools.daemons("spindle-list-"));
    try {
      List<Future<Folder>> futures = new ArrayList<>(folders.size());
      for (Map.Entry<String, Map<String, String>> folder : folders.entrySet()) {
        futures.add(
            pool.submit(
                () -> lookAt(folder.getKey(), folder.getValue(), found, conf, entriesPerName)));
      }
      List<Folder> looked = new ArrayList<>(futures.size());
      for (Future<Folder> future : futures) {
        looked.add(result(future));
      }
      return looked;
    } finally {
      pool.shutdownNow();
    }
  }

  private static Folder result(Future<Folder> future) throws IOException {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while listing the folders of a brace pattern");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IOException(cause);
    }
  }

  /**
   * Lists one folder for its names (name to URI; they leave it as they are found, the map is this
   * call's alone), then stats those its listing's budget did not reach.
   */
  private static Folder lookAt(
      String folder,
      Map<String, String> left,
      Map<String, FileCount> found,
      Configuration conf,
      int entriesPerName)
      throws IOException {
    Path path = new Path(folder);
    FileSystem fs = path.getFileSystem(conf);
    long entries = list(fs, path, left, (long) entriesPerName * left.size(), found);
    for (String uri : left.values()) {
      found.put(uri, status(fs, uri));
    }
    return new Folder(entries, left.size());
  }

  /**
   * Lists {@code folder} until every name of {@code left} was matched or {@code budget} entries
   * were returned; matched names leave {@code left}. A folder that does not exist leaves nothing to
   * look at: its names do not exist either.
   *
   * @return the entries listed
   */
  private static long list(
      FileSystem fs,
      Path folder,
      Map<String, String> left,
      long budget,
      Map<String, FileCount> found)
      throws IOException {
    long seen = 0;
    try {
      RemoteIterator<FileStatus> it = fs.listStatusIterator(folder);
      boolean more = true;
      while (!left.isEmpty() && seen < budget && (more = it.hasNext())) {
        FileStatus f = it.next();
        seen++;
        String uri = left.remove(f.getPath().getName());
        if (uri != null) {
          found.put(uri, facts(uri, f));
        }
      }
      if (!more) {
        left.clear(); // listed to the end: the names not seen do not exist
      }
    } catch (FileNotFoundException e) {
      left.clear();
    }
    return seen;
  }

  private static FileCount status(FileSystem fs, String uri) throws IOException {
    try {
      return facts(uri, fs.getFileStatus(new Path(uri)));
    } catch (FileNotFoundException e) {
      return FileCount.refused(uri, uri + " does not exist");
    }
  }

  private static FileCount facts(String uri, FileStatus f) {
    return f.isFile()
        ? new FileCount(uri, f.getLen(), f.getModificationTime(), -1, null)
        : FileCount.refused(uri, uri + " is a folder, not a shard file");
  }
}
