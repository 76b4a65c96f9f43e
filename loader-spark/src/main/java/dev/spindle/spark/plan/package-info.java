/**
 * Epoch plans: which rank gets which samples in which order, and how a run resumes. Pure
 * computation on {@code long[]}/{@code int[]} arrays; no Spark, no I/O, no threads of its own.
 *
 * <pre>
 *  Manifest (shard sample counts)  ─┐
 *  PlanSpec (seed, epoch, world size,├─► EpochPlan.create ─► RankPlan per rank ─► ReadPlan per slice
 *            batch size, remainder,  │                        (indices, batches,    (per shard: sorted
 *            shuffle window)        ─┘                         padding, digest)      positions → slots)
 *  LoaderState (JSON) ──► LoaderState.resume(manifest, world size) ─► EpochPlan (rest of the epoch)
 *  EpochPlan.stateAfter(batches consumed per rank) ─► LoaderState
 * </pre>
 *
 * <p>What enters: a {@link dev.spindle.spark.manifest.Manifest} (dataset index of a sample = {@code
 * offsets[shard] + position in shard}), a {@link dev.spindle.spark.plan.PlanSpec}, optionally a
 * {@link dev.spindle.spark.plan.LoaderState}. What leaves: immutable, serializable plans that the
 * driver computes once and ships to executors, and small JSON documents. Every class may be called
 * from any thread; the driver's main thread computes plans, executor task threads only read them. A
 * plan holds O(shards + ranks) numbers, never the samples' indices: each task derives its own
 * batches from the windows they overlap (see "Cost" at the end).
 *
 * <h2>The algorithm (normative: a reimplementation must give the same indices)</h2>
 *
 * <p>All arithmetic is on unsigned 64-bit words with wrap-around; {@code >>>} is a logical shift.
 *
 * <h3>Random streams</h3>
 *
 * <pre>
 *   mix(z):  z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9
 *            z = (z ^ (z >>> 27)) * 0x94D049BB133111EB
 *            return z ^ (z >>> 31)
 *   stream(seed, epoch, id, block): state = mix(mix(mix(mix(seed) ^ epoch) ^ id) ^ block)
 *   next():  state = state + 0x9E3779B97F4A7C15; return mix(state)        (SplitMix64)
 *   below(n): x = next(); return floor(x * n / 2^64)        (the high word of the 128-bit product)
 *   shuffle(a[0..len)): for i = len-1 down to 1: j = below(i + 1); swap a[i], a[j]
 * </pre>
 *
 * The seed is the 64-bit two's-complement value of the (signed) {@code long} seed; {@code epoch}
 * and {@code block} are non-negative. Stream ids: 1 = shard order, 2 = windows, 3 = one sample's
 * random image operations (block = the sample's index; {@code dev.spindle.spark.image}'s package
 * documentation says what they draw; an up-sampled sample of a mixture repeats its operations), 4 =
 * the seeds of a mixture's sources (block = source·2^32 + pass; "Mixtures").
 *
 * <h3>One epoch</h3>
 *
 * <ol>
 *   <li>Shard order: {@code order = [0, 1, …, S-1]}, shuffled with {@code stream(seed, epoch, 1,
 *       0)}.
 *   <li>Sequence: for each shard {@code s} in {@code order}, append its dataset indices {@code
 *       offsets[s], …, offsets[s+1]-1} ascending. Length {@code N} = total samples.
 *   <li>Windows: with window {@code K}, for {@code b = 0, 1, …} while {@code b*K < N}, shuffle the
 *       slice {@code [b*K, min(N, (b+1)*K))} in place with {@code stream(seed, epoch, 2, b)}. A
 *       sample moves at most {@code K-1} places from its shard-order position, so a rank's
 *       contiguous part touches few shards.
 *   <li>Split among {@code W} ranks, batch size {@code B}, round {@code R = W*B}. Refused when
 *       {@code N < R} (a rank would get zero batches; its share is smaller than a batch), and under
 *       {@code EXACT} when {@code N mod R != 0}.
 *       <ul>
 *         <li>{@code DROP_LAST}, {@code EXACT}: {@code L = floor(N/R)*B}; rank {@code r} gets
 *             {@code seq[r*L, (r+1)*L)}; the last {@code N - W*L} samples are dropped this epoch.
 *         <li>{@code PAD}: {@code L = ceil(N/R)*B}; shares are contiguous and balanced: with {@code
 *             q = floor(N/W)}, {@code e = N mod W}, rank {@code r} starts at {@code r*q + min(r,
 *             e)} and takes {@code q + (r < e ? 1 : 0)} samples ({@code share}), then {@code L -
 *             share} padding entries, entry {@code j} being the rank's own sample {@code j mod
 *             share} (or {@code seq[j mod N]} when {@code share = 0}, which only a resume can
 *             produce). When {@code R} divides {@code N} this equals {@code DROP_LAST}.
 *       </ul>
 *       Batch {@code k} of a rank is its entries {@code [k*B, (k+1)*B)}; padding is always last.
 * </ol>
 *
 * <h3>Mixtures</h3>
 *
 * A mixture draws from several data sets ("sources") in given proportions. Its catalog is the
 * sources' manifests laid end to end, in the order the sources were given: source {@code s} is the
 * shards {@code [first_s, end_s)}, its samples the dataset indices {@code [base_s, base_s + n_s)}.
 * Only the sequence (steps 1–3) differs from a single source; the split, padding, resume and digest
 * are the same, on positions of the mixed sequence.
 *
 * <ol>
 *   <li>Weights: the proportions (positive decimals, at most 6 decimal places) are multiplied by
 *       {@code 10^d} ({@code d}: the most decimal places among them) and divided by their greatest
 *       common divisor: integer weights {@code w_s}, period {@code P = sum(w_s)} (at most
 *       1,000,000). {@code 0.7, 0.3} and {@code 7, 3} both give {@code 7, 3}: proportions are
 *       normalised, they need not sum to 1.
 *   <li>Pattern (smooth weighted round-robin): credits {@code c_s = 0}; for slot {@code o = 0 …
 *       P-1}: {@code c_s += w_s} for every {@code s}; the source with the largest {@code c_s} (the
 *       lowest index on a tie) takes slot {@code o}; its {@code c_s -= P}. Slot {@code p} of the
 *       epoch belongs to the source of pattern slot {@code p mod P}; each period holds exactly
 *       {@code w_s} slots of source {@code s}, and any run of slots holds each source's share to
 *       within a slot or two.
 *   <li>Source orders: source {@code s}'s pass {@code j} is steps 1–3 applied to the source's own
 *       shards (counts {@code n_s} in total), with the seed replaced by the first output of {@code
 *       stream(seed, epoch, 4, s·2^32 + j)} (and the same epoch and window), then {@code base_s}
 *       added to each index. The source's stream is its passes {@code 0, 1, 2, …} end to end.
 *   <li>Sequence: slot {@code p} holds the next unused entry of its source's stream: with {@code k}
 *       earlier slots of the same source, entry {@code k} (pass {@code k / n_s}, position {@code k
 *       mod n_s}).
 *   <li>Length {@code N} (the epoch, {@code spark.spindle.mix.epoch}): {@code total} (the default):
 *       {@code N = sum(n_s)}; {@code samples:N}; {@code first-exhausted}: the number of slots
 *       before any source would need an entry of its pass 1 ({@code min_s} of the slot of source
 *       {@code s}'s entry {@code n_s}); {@code all-exhausted}: the slots up to and including the
 *       last source's entry {@code n_s - 1} ({@code max_s} of that slot, plus 1). A source whose
 *       share of {@code N} exceeds {@code n_s} is up-sampled (its samples repeat, in its next
 *       pass's order); one whose share is smaller is down-sampled (only the first part of its pass
 *       0 is used; the next epoch draws a fresh order). A source with no samples is refused.
 * </ol>
 *
 * The loader state of a mixture records it ({@code "mix"}: the sources' names, weights and shard
 * counts, and {@code N}); a resume asking for another mixture is refused.
 *
 * <h3>Token budgets</h3>
 *
 * With a token budget {@code T} over a declared list field ({@code spark.spindle.batchTokens}), the
 * batch size {@code B} is the most rows a batch may hold, and {@code len(i)} is that field's length
 * (entries of the list) in the sample of dataset index {@code i}. Steps 1–3 are unchanged; step 4
 * works on packed batches instead of samples:
 *
 * <ol>
 *   <li>Packing: for each window {@code b} in order, walk its positions {@code p} in their shuffled
 *       order with an open batch of {@code rows} samples and {@code sum} tokens (both 0 at the
 *       window's start): if {@code rows > 0} and ({@code rows = B} or {@code sum + len(seq[p]) >
 *       T}), close the batch at {@code p}; then add {@code seq[p]}. At the window's end close the
 *       open batch. Batch {@code t} of the epoch is the {@code t}-th closed: a stretch {@code
 *       [start_t, start_{t+1})} of the sequence within one window, of at most {@code B} rows and
 *       {@code T} tokens, except that a sample with {@code len > T} is a batch of its own (serving
 *       quarantines it, naming field, length and budget: its row is a stand-in with weight 0). A
 *       window's batches depend on its own samples' lengths only.
 *   <li>Split: the epoch's {@code U} batches are split among the ranks exactly as samples are in
 *       step 4 with batch size 1 ({@code R = W}): {@code DROP_LAST} gives every rank {@code
 *       floor(U/W)} consecutive batches and drops the last {@code U mod W} batches (their samples)
 *       this epoch; {@code PAD} gives balanced consecutive shares of batches, padded to {@code
 *       ceil(U/W)} by repeating the rank's own batches (every row of a padding batch is padded);
 *       {@code EXACT} refuses unless {@code W} divides {@code U}. Refused when {@code U < W}.
 *   <li>Resume: the legs count whole batches; the rest after a leg is, rank by rank, each rank's
 *       real batches from {@code consumed_i[r]} on, and the next leg is the {@code PAD} split of
 *       that rest with batch size 1. Everything of "Resume" below holds with "entries" meaning
 *       packed batches.
 * </ol>
 *
 * A rank's batch {@code k} delivers the samples of the packed batch it holds, in sequence order.
 * The digest is over those samples' indices. The loader state records {@code "batchTokens":
 * {"field": …, "tokens": T}}; a resume asking for another budget is refused. Mixtures are refused
 * with a budget. Without a budget nothing here applies and plans are as above, digest for digest.
 *
 * <h3>Resume</h3>
 *
 * A {@link dev.spindle.spark.plan.LoaderState} names the epoch, the settings and a list of legs
 * {@code (W_i, consumed_i[])}. Leg 0 is the split above with {@code W_0}. The rest after leg {@code
 * i} is, rank by rank in rank order, each rank's real (not padded) entries from position {@code
 * consumed_i[r]*B} on; leg {@code i+1} is the {@code PAD} split of that rest with {@code W_{i+1}}
 * (whatever the epoch's remainder policy: dropping would lose samples of the epoch; a rank may then
 * get only padding). Resuming with world size {@code M}:
 *
 * <ul>
 *   <li>a last leg with nothing consumed is ignored (as if never started); no leg left means the
 *       epoch's fresh plan with {@code M};
 *   <li>an empty rest means the next epoch's fresh plan with {@code M};
 *   <li>if {@code M} equals the last leg's world size and all its ranks consumed the same count
 *       {@code c}, the plan is that leg with batches {@code [0, c)} skipped: exactly the tail of
 *       the uninterrupted run;
 *   <li>otherwise a new leg: the {@code PAD} split of the rest with {@code M}. Every remaining
 *       sample is delivered exactly once; only padding repeats.
 * </ul>
 *
 * When every rank of a leg has consumed all its batches, the state moves to {@code epoch + 1} with
 * one leg of the same world size and nothing consumed. Batch identities are {@code (epoch, leg,
 * rank, batch)} ({@link dev.spindle.spark.plan.BatchKey}).
 *
 * <h3>Loader state JSON ({@code spindle-loader-state/1})</h3>
 *
 * <pre>
 * { "format": "spindle-loader-state/1",
 *   "manifest": { "sha256": "…64 hex…", "shards": 12, "samples": 1200 },
 *   "seed": 42, "epoch": 3, "batchSize": 64, "remainder": "DROP_LAST", "shuffleWindow": 16384,
 *   "worldSize": 4, "batchesConsumed": [10, 10, 10, 10],      (the current leg)
 *   "earlierLegs": [ { "worldSize": 8, "batchesConsumed": [3, 3, 3, 3, 3, 3, 3, 3] } ],
 *   "mix": { "sources": [ { "name": "a", "weight": 7, "shards": 8 },     (mixtures only)
 *                         { "name": "b", "weight": 3, "shards": 4 } ], "samples": 1200 },
 *   "batchTokens": { "field": "tokens", "tokens": 4096 } }              (token budgets only)
 * </pre>
 *
 * {@code manifest.sha256} is the manifest fingerprint ({@link dev.spindle.spark.manifest}'s package
 * documentation specifies it, with the manifest's JSON and binary forms).
 *
 * <h3>Digest</h3>
 *
 * SHA-256 of the indices in delivery order, 8 big-endian bytes each, as lowercase hex ({@link
 * dev.spindle.spark.plan.Digest}).
 *
 * <h2>Cost (not normative: how this implementation computes the algorithm above)</h2>
 *
 * <p>Nothing materializes the epoch's sequence. A plan is {@code EpochSequence} (the manifest's
 * offsets, seed, epoch, window; the shard order and each shard's start in the sequence are
 * recomputed on first use in each JVM: O(S) time and 12 bytes per shard) plus {@code Segments}, the
 * sequence a leg splits, plus per rank four numbers (start, real entries, entries, first batch).
 * The driver's work per epoch is O(S + W). A task derives batches {@code [a, b)} of a rank with
 * {@link dev.spindle.spark.plan.RankPlan#indices(int, int)}: the real entries are a contiguous
 * stretch of the sequence, so only the windows it overlaps are rebuilt and shuffled, O((b − a)·B +
 * 2K) work; padding repeats entries of the same stretch and derives each repeated entry once.
 *
 * <p>A resumed leg: the rest after leg {@code i} is, rank by rank, one stretch per rank, so after
 * legs of {@code W_0, …, W_k} ranks it is at most {@code W_0 + … + W_k} stretches (adjacent ones
 * joined), 16 bytes each: the driver's work is O(S + W_0 + … + W_k) for every resume, however far
 * the epoch had got. A rank of a resumed leg may cross several stretches; each costs up to two
 * partially used windows, so a task deriving {@code n} entries that cross {@code c} stretches does
 * O(n + 2K·c) work. Resuming from {@code W} ranks to {@code M < W} gives {@code c ≈ W/M + 1}: from
 * 8,192 ranks to 8 with K = 16,384, about 1,025 stretches and 34 M shuffle steps per rank (a
 * fraction of a second). The exact-tail resume (same world size, equal progress) costs what a fresh
 * plan does.
 *
 * <p>Token budgets: the driver packs each epoch window by window from the samples' lengths (one
 * {@code int} per sample, read by one Spark job over the shards when the job starts, {@code
 * feed.TokenLengths}) and keeps a batch table of one start position and one token count per batch
 * (12 bytes a batch); plans ship the table, and {@code train}'s ranks, which plan their next epochs
 * themselves, get the lengths too (4 bytes a sample). Packing an epoch is O(N) on the driver.
 */
package dev.spindle.spark.plan;
