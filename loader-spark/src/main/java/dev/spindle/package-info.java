/**
 * Spindle's public Java/Scala API: what a user's own Spark job calls. Everything starts at {@link
 * dev.spindle.Spindle}, whose builders read in the order the data flows:
 *
 * <pre>
 *  Spindle.preprocess(spark)  input ─► transforms ─► output ─► run() ─► PreprocessReport
 *  Spindle.feed(spark)        input ─► plan (world size, seed, batch) ─► epochs
 *                               ─► serve() or the in-JVM consumer ─► run() ─► FeedReport
 *  Spindle.read(spark)        option(...) ─► load(uri) ─► Dataset&lt;Row&gt;
 * </pre>
 *
 * <p><b>The caller's session.</b> Every builder takes the caller's {@code SparkSession} and works
 * on any master. Spindle never stops it and never changes its configuration: it reads the session's
 * {@code spark.spindle.*} settings (from {@code spark-defaults.conf}, {@code --conf}, the session
 * builder or {@code spark.conf().set}), and a builder's own settings ({@code batchSize(256)},
 * {@code set(key, value)}) apply to that one job only, on top of them.
 *
 * <p><b>Threads.</b> A builder is used by one thread; {@code run()} blocks that thread until the
 * job ends and may be called from any thread that may submit Spark jobs. Builders of different jobs
 * on one session may run on different threads at once, except that one session runs one {@code
 * feed} at a time.
 *
 * <p><b>In the Spark UI.</b> While {@code run()} runs, the Spark jobs it starts on the calling
 * thread carry a job group ({@code spindle-…}) and a description ({@code preprocess URI (N shards,
 * …)}, {@code feed epoch e of 0..E-1 (…)}); the thread's former group and description come back
 * when it returns. Its tasks add to named accumulators ({@code spindle.samples}, {@code
 * spindle.bytes}, {@code spindle.quarantined}) as they go, which {@link
 * dev.spindle.spark.progress.ProgressListener} sums over the cluster.
 *
 * <p><b>Errors.</b> A bad setting fails in the builder call or at the start of {@code run()},
 * before any Spark work, with an {@link java.lang.IllegalArgumentException} naming the key or
 * method, the value and what is allowed. An unknown {@code spark.spindle.*} key, given to a builder
 * or set on the session, fails the same way, naming the closest valid key ({@code Unknown key
 * spark.spindle.batchsize (did you mean spark.spindle.batchSize?)}), unless {@code
 * spark.spindle.allowUnknownKeys} is true (then it is logged and ignored). A failed job throws from
 * {@code run()} with a message that names the shard, file or key at fault; a preprocess job that
 * fails commits nothing.
 *
 * <p>The packages under {@code dev.spindle.spark} and {@code dev.spindle.gpu} are Spindle's
 * implementation: public only where the packages need each other, and free to change.
 */
package dev.spindle;
