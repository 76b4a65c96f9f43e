package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The one parser of a WebDataset tar shard's samples. Counting (the manifest's per-shard sample
 * counts) and reading (preprocess, feed, skipping or not) all walk a shard through this class, so
 * for any bytes they see the same samples at the same positions. One thread; not thread-safe.
 *
 * <p>The rules: consecutive regular-file entries with the same key ({@link WebDatasetKeys},
 * compared as raw name bytes) form one sample; samples are numbered from 0. Members that belong to
 * no sample in WebDataset either (hidden names such as macOS's {@code ._*} AppleDouble files,
 * {@code __MACOSX/}, WebDataset's {@code __…__} metadata: {@link WebDatasetKeys#isSampleMember})
 * are passed over like directories, so they neither split a sample nor count as one. A key that an
 * earlier sample of the shard already had starts a sample that carries a problem naming that
 * sample's position. When the archive cannot be parsed past some point ({@link TarFormatException},
 * or any runtime failure of the parser), the sample being collected ends there and one last sample,
 * key {@value #DAMAGE_KEY}, carries the damage as its problem: what the shard holds after it cannot
 * be known, so neither counting nor reading guesses.
 *
 * <p>Calling pattern: {@link #nextSample()}; then, to read the sample, {@link #nextEntry()} (with
 * {@link #readContent()} where wanted) until it returns false. Entries not visited are skipped by
 * their headers on the next {@code nextSample()}.
 */
final class TarSampleCursor {
  static final String DAMAGE_KEY = "(rest of shard)";

  private enum State {
    BEFORE,
    SAMPLE,
    DAMAGE,
    END
  }

  private final TarEntryReader entries;
  private final Map<String, Long> firstPositions = new HashMap<>();
  private State state = State.BEFORE;
  private boolean staged; // the entry reader stands on an entry no sample has taken yet
  private boolean exhausted; // no entry follows: the archive ended or is damaged
  private byte[] stagedKey;
  private String damage;
  private long position;
  private long start; // the current sample's first byte in the stream
  private long end; // the end of its last member taken so far
  private byte[] rawKey;
  private String key;
  private String problem;

  TarSampleCursor(InputStream in, String shard) {
    this(in, shard, 0, 0);
  }

  /**
   * A cursor over bytes whose first sample is the shard's sample {@code firstPosition} and whose
   * first byte is the shard's byte {@code startOffset}: one sample's byte range ({@link TarIndex}),
   * read alone, numbers that sample (and places its damage) as a walk of the whole shard does.
   */
  TarSampleCursor(InputStream in, String shard, long firstPosition, long startOffset) {
    this.entries = new TarEntryReader(in, shard, startOffset);
    this.position = firstPosition - 1;
  }

  /** The problem of the {@value #DAMAGE_KEY} sample of a shard damaged as {@code damage} says. */
  static String damageProblem(String damage) {
    return "shard damaged; nothing after this point can be read: " + damage;
  }

  /**
   * Moves to the next sample, skipping what is left of the current one; false at the end.
   *
   * @throws IOException only when the stream itself fails (not for damage, which is a sample)
   */
  boolean nextSample() throws IOException {
    if (state == State.BEFORE) {
      advance();
    }
    while (nextEntry()) {
      // skips the rest of the current sample: its entries' content is never read
    }
    if (staged) {
      begin();
      return true;
    }
    if (damage != null && state != State.DAMAGE && state != State.END) {
      position++;
      state = State.DAMAGE;
      key = DAMAGE_KEY;
      problem = damageProblem(damage);
      return true;
    }
    state = State.END;
    return false;
  }

  /** Moves to the current sample's next entry; false when the sample has no more. */
  boolean nextEntry() throws IOException {
    if (state != State.SAMPLE) {
      return false;
    }
    if (!staged) {
      advance();
    }
    if (staged && Arrays.equals(stagedKey, rawKey)) {
      staged = false;
      end = entries.end();
      return true;
    }
    return false;
  }

  /**
   * The current entry's content (the caller checks {@link #entrySize()} first).
   *
   * @throws TarFormatException when the archive ends inside it: the shard is damaged from here
   */
  byte[] readContent() throws IOException {
    try {
      return entries.readContent();
    } catch (TarFormatException e) {
      damaged(e.getMessage());
      throw e;
    }
  }

  /** The current sample's position in the shard, from 0. */
  long position() {
    return position;
  }

  /**
   * Where the current sample starts in the stream: the first header block of its first member (an
   * entry of no sample before it lies outside).
   */
  long start() {
    return start;
  }

  /**
   * Where the current sample's last member taken so far ends (its content padded to whole blocks):
   * once {@link #nextEntry()} returned false, the end of the sample's bytes.
   */
  long end() {
    return end;
  }

  /** The current sample's key ({@value #DAMAGE_KEY} for the damage). */
  String key() {
    return key;
  }

  /** Why the current sample is unusable whatever its entries (repeated key, damage), or null. */
  String problem() {
    return problem;
  }

  /** Why the archive could not be read to its end, or null. */
  String damage() {
    return damage;
  }

  String entryName() {
    return entries.name();
  }

  /** The current entry's extension, lower case ({@link WebDatasetKeys#extension}). */
  String entryExtension() {
    return WebDatasetKeys.extension(entries.rawName());
  }

  long entrySize() {
    return entries.size();
  }

  private void begin() {
    position++;
    state = State.SAMPLE;
    start = entries.start();
    end = entries.end();
    rawKey = stagedKey;
    key = EscapedUtf8.text(rawKey);
    Long first = firstPositions.putIfAbsent(key, position);
    problem =
        first == null
            ? null
            : "key '"
                + key
                + "' is already the key of sample #"
                + first
                + " of this shard (a sample's entries must be consecutive; keys are unique within a shard)";
  }

  private void advance() throws IOException {
    if (exhausted) {
      return;
    }
    try {
      staged = entries.next();
      while (staged && !WebDatasetKeys.isSampleMember(entries.rawName())) {
        staged = entries.next(); // AppleDouble, __MACOSX/, WebDataset's metadata: no sample's
      }
      exhausted = !staged;
      stagedKey = staged ? WebDatasetKeys.key(entries.rawName()) : null;
    } catch (TarFormatException e) {
      damaged(e.getMessage());
    } catch (UncheckedIOException e) {
      throw e.getCause(); // the storage, not the bytes: the task fails and is retried
    } catch (RuntimeException e) { // a parser bug must not outlive the shard it met
      damaged("unexpected parser failure: " + e);
    }
  }

  private void damaged(String reason) {
    damage = reason;
    staged = false;
    exhausted = true;
  }
}
