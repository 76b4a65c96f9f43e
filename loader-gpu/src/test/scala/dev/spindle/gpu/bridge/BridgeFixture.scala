package dev.spindle.gpu.bridge

import java.net.{StandardProtocolFamily, UnixDomainSocketAddress}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.SocketChannel
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest
import java.time.Duration
import java.util.{Comparator, HexFormat}
import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, TimeUnit}

import dev.spindle.gpu.device.{Device, NormalizeSpec, SharedMemoryDevice}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder, TestBatches, TestFields}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, IntVector, VarCharVector}
import org.apache.arrow.vector.complex.FixedSizeListVector

import scala.jdk.CollectionConverters._

/** What the test producer offered as batch `number`, read back from its Arrow vectors. */
final case class Expected(number: Long, sha256: String, labels: Seq[Long], indices: Seq[Long],
    keys: Seq[String])

/** Feeders (on shared memory, or a GPU) fed by producer threads, a bridge, Python trainers. */
object BridgeFixture {
  val ImageBytes = 48
  val Rows = 4
  /** The trainers' interpreter: `SPINDLE_PYTHON`, else Debian's `/usr/bin/python3` (needs numpy). */
  val Python: String = sys.env.getOrElse("SPINDLE_PYTHON", "/usr/bin/python3")
  val Scripts: Path = Paths.get(sys.props.getOrElse("user.dir", ".")).resolve("python")
    .toAbsolutePath

  /**
   * One rank's feeder with a producer thread offering one batch per id of `ids`, on `device`
   * (which the feeder then owns); with `fields`, its batches carry [[TestFields]]' extra fields.
   */
  final class Feed(val rank: Int, val ids: Seq[Long], slots: Int,
      gate: CountDownLatch = new CountDownLatch(0), val device: Device = new SharedMemoryDevice(),
      keyOf: (Long, Int) => String = TestBatches.key, lease: Option[Duration] = None,
      fields: Boolean = false) {
    val feeder: GpuFeeder = GpuFeeder.open(device, {
      val c = FeederConfig.of(Rows, NormalizeSpec.raw(ImageBytes, 1, 1)).withSlots(slots)
        .withCloseGrace(Duration.ofMillis(200))
        .withFields((if (fields) TestFields.Slots else Seq.empty).asJava)
      lease.fold(c)(c.withLeaseTimeout)
    })
    val expected = new ConcurrentHashMap[Long, Expected]()
    @volatile var failure: Throwable = _
    private val alloc = new RootAllocator()
    private val producer = new Thread(() => produce(), s"test-producer-$rank")
    producer.setDaemon(true)
    producer.start()

    private def produce(): Unit =
      try {
        gate.await()
        for ((id, seq) <- ids.zipWithIndex) {
          val core = TestBatches.build(alloc, id, Rows, ImageBytes, tensor = seq % 2 == 0,
            keyOf = keyOf)
          val root = if (fields) TestFields.append(alloc, core, id) else core
          try {
            expected.put(seq.toLong, describe(seq, root))
            feeder.offer(root, Duration.ofSeconds(120))
          } finally root.close()
        }
        feeder.endOfInput()
      } catch {
        case _: InterruptedException =>
        case e: Throwable => failure = e
      }

    def close(): Unit = {
      producer.interrupt()
      producer.join(10000)
      feeder.close()
      assert(alloc.getAllocatedMemory == 0, s"producer leaked ${alloc.getAllocatedMemory}")
      alloc.close()
    }

    /** Shared slabs still open (0 once the feeder closed; always 0 off shared memory). */
    def slabsLeft: Int = device match {
      case s: SharedMemoryDevice => s.segments().size()
      case _ => 0
    }
  }

  private def describe(seq: Int, root: org.apache.arrow.vector.VectorSchemaRoot): Expected = {
    val image = root.getVector("image") match {
      case l: FixedSizeListVector => l
      case e: org.apache.arrow.vector.ExtensionTypeVector[_] =>
        e.getUnderlyingVector.asInstanceOf[FixedSizeListVector]
    }
    val n = Rows * ImageBytes
    val bytes = new Array[Byte](n)
    image.getDataVector.getDataBuffer.getBytes(0, bytes)
    val labels = root.getVector("label").asInstanceOf[IntVector]
    val index = root.getVector("index").asInstanceOf[BigIntVector]
    val keys = root.getVector("key").asInstanceOf[VarCharVector]
    Expected(seq, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)),
      (0 until Rows).map(labels.get(_).toLong), (0 until Rows).map(index.get),
      (0 until Rows).map(r => new String(keys.get(r), StandardCharsets.UTF_8)))
  }

  /** A trainer process running tests/trainer_check.py; `lines()` parses its --out file. */
  final class Trainer(socket: Path, rank: Int, world: Int, dir: Path, extra: Seq[String]) {
    val out: Path = Files.createTempFile(dir, s"rank$rank-", ".jsonl")
    private val log = Files.createTempFile(dir, s"rank$rank-", ".log")
    val process: Process = {
      val pb = new ProcessBuilder((Seq(Python,
        Scripts.resolve("tests/trainer_check.py").toString, "--socket", socket.toString,
        "--rank", rank.toString, "--world", world.toString, "--out", out.toString) ++ extra)
        .asJava).redirectErrorStream(true).redirectOutput(log.toFile)
      pb.environment().put("PYTHONDONTWRITEBYTECODE", "1")
      runToken(socket).foreach(t => pb.environment().put(RunToken.ENV, t))
      pb.start()
    }

    /** Waits for exit (generous: a loaded 2-core machine) and returns the exit code. */
    def await(): Int = {
      assert(process.waitFor(120, TimeUnit.SECONDS), s"trainer rank $rank did not finish")
      process.exitValue()
    }

    def output: String = Files.readString(log)

    def lines(): Seq[Line] =
      Files.readAllLines(out, StandardCharsets.UTF_8).asScala.toSeq.map(l => Line(l.split("\t", -1).toIndexedSeq))

    def batches(): Seq[Line] = lines().filter(_.kind == "B")
  }

  /** One line of a trainer's --out file, split at tabs. */
  final case class Line(fields: IndexedSeq[String]) {
    def kind: String = fields(0)
    def batch: Long = fields(1).toLong
    def sha256: String = fields(2)
    def arrayType: String = fields(3)
    def labels: Seq[Long] = longs(4)
    def indices: Seq[Long] = longs(5)
    def keys: Seq[String] = fields(6).split('|').toSeq
    def shape: String = fields(7)
    def device: String = fields(8)
    def view: String = fields(9)
    private def longs(i: Int): Seq[Long] = fields(i).split(',').toSeq.map(_.toLong)
  }

  /** Deletes `p` and everything under it (a test's temporary directory). */
  def deleteRecursively(p: Path): Unit =
    if (Files.exists(p)) {
      val all = Files.walk(p)
      try all.sorted(Comparator.reverseOrder[Path]()).forEach(f => Files.delete(f))
      finally all.close()
    }

  def header(version: Int, tpe: Int, length: Int): Array[Byte] = {
    val b = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN)
    b.put("SPDL".getBytes("UTF-8")).putShort(version.toShort).putShort(tpe.toShort)
      .putInt(length)
    b.array()
  }

  /** A frame of the current protocol version. */
  def frame(tpe: Int, payload: ByteBuffer): Array[Byte] =
    header(Wire.VERSION, tpe, payload.remaining()) ++ {
      val a = new Array[Byte](payload.remaining()); payload.get(a); a
    }

  /** A frame of an earlier protocol version, as a client of an earlier Spindle release sends it. */
  def frameOf(version: Int, tpe: Int, payload: ByteBuffer): Array[Byte] =
    header(version, tpe, payload.remaining()) ++ {
      val a = new Array[Byte](payload.remaining()); payload.get(a); a
    }

  /**
   * The token the bridge on `socket` wrote beside it, as a user starting a trainer by hand reads
   * it; None when there is no such file.
   */
  def runToken(socket: Path): Option[String] = {
    val f = socket.resolveSibling(socket.getFileName.toString + ".token")
    if (Files.exists(f)) Some(Files.readString(f).trim) else None
  }

  /** A HELLO payload (versions 5 and 6): token, rank, world, resume, device, plan identity, pid. */
  def hello(rank: Int, world: Int, device: String = "cpu", token: String = "",
      resume: Long = -1, plan: String = "", pid: Int = 0): ByteBuffer = {
    val parts = Seq(token, device, plan).map(_.getBytes("UTF-8"))
    val b = ByteBuffer.allocate(32 + parts.map(_.length).sum).order(ByteOrder.LITTLE_ENDIAN)
    b.putInt(parts(0).length).put(parts(0)).putInt(rank).putInt(world).putLong(resume)
      .putInt(parts(1).length).put(parts(1)).putInt(parts(2).length).put(parts(2)).putInt(pid)
      .flip()
  }

  /** A HELLO that presents the token of the bridge on `socket`. */
  def helloTo(socket: Path, rank: Int, world: Int, device: String = "cpu", resume: Long = -1,
      plan: String = "", pid: Int = 0): ByteBuffer =
    hello(rank, world, device, runToken(socket).get, resume, plan, pid)

  /**
   * A loader state document (spindle-loader-state/1) as a feed job writes it: the plan's
   * settings, the current leg's `consumed` per rank, and `earlierLegs` (JSON).
   */
  def loaderState(epoch: Int, manifest: String, consumed: Seq[Long], seed: Long = 3,
      batchSize: Int = Rows, earlierLegs: String = "[]"): String =
    s"""{"format": "spindle-loader-state/1", "manifest": {"sha256": "$manifest", "shards": 2, """ +
      s""""samples": 64}, "seed": $seed, "epoch": $epoch, "batchSize": $batchSize, """ +
      s""""remainder": "DROP_LAST", "shuffleWindow": 64, "worldSize": ${consumed.size}, """ +
      s""""batchesConsumed": ${consumed.mkString("[", ", ", "]")}, "earlierLegs": $earlierLegs}"""

  /** A file in `dir` holding `state` (what a trainer saved with its checkpoint). */
  def stateFile(dir: Path, state: String): Path =
    Files.writeString(Files.createTempFile(dir, "state-", ".json"), state)

  /** Sends `bytes`, returns the ERROR's (code, message); the server must then close. */
  def refusal(socket: Path, bytes: Array[Byte]): (Int, String) = {
    val ch = SocketChannel.open(StandardProtocolFamily.UNIX)
    try {
      ch.connect(UnixDomainSocketAddress.of(socket))
      ch.write(ByteBuffer.wrap(bytes))
      val f = Wire.read(ch)
      assert(f.`type` == Wire.ERROR)
      val code = f.payload.getShort.toInt
      val msg = Wire.getString(f.payload)
      assert(Wire.read(ch) == null, "the server should close a refused connection")
      (code, msg)
    } finally ch.close()
  }
}
