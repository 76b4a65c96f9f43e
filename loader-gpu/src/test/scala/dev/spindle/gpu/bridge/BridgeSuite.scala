package dev.spindle.gpu.bridge

import java.io.IOException
import java.lang.management.ManagementFactory
import java.net.{StandardProtocolFamily, UnixDomainSocketAddress}
import java.nio.ByteBuffer
import java.nio.channels.SocketChannel
import java.util.concurrent.atomic.AtomicInteger
import java.nio.file.{Files, Path}
import java.nio.file.attribute.PosixFilePermissions
import java.time.Duration
import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import dev.spindle.gpu.bridge.BridgeFixture._
import dev.spindle.gpu.device.{HostDevice, NormalizeSpec, SharedMemoryDevice}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder, TestFields}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** The bridge end to end: Python trainer processes against live feeders on shared memory. */
class BridgeSuite extends AnyFunSuite with BeforeAndAfterAll {
  /** Every temporary directory a test made: afterAll fails the suite if one is left. */
  private val made = new java.util.concurrent.ConcurrentLinkedQueue[Path]()

  /** Whatever tests ran (all, one, none), each removed the temporary directories it made. */
  override def afterAll(): Unit = {
    val left = made.asScala.filter(Files.exists(_))
    assert(left.isEmpty, s"temporary directories left behind: $left")
  }

  private def tempDir(): Path = {
    val dir = Files.createTempDirectory("spindle-bridge-test")
    made.add(dir)
    dir
  }

  private def withBridge[T](world: Int, feeds: Seq[Feed], state: String = "",
      admission: Admission = Admission.of(RunToken.random()))(
      f: (BridgeServer, Path) => T): T = {
    val dir = tempDir()
    val socket = dir.resolve("run").resolve("bridge.sock")
    val server = BridgeServer.start(socket, world,
      feeds.map(fd => new RankFeed(fd.rank, fd.feeder, 0, state)).asJava,
      admission)
    teardown(server, feeds, dir)(f(server, dir))
  }

  /** A bridge from `listen`: ranks are served by the test, as feed tasks do. */
  private def withLateBridge[T](world: Int, feeds: Seq[Feed])(f: (BridgeServer, Path) => T): T = {
    val dir = tempDir()
    val server = BridgeServer.listen(dir.resolve("run").resolve("bridge.sock"), world,
      Duration.ofSeconds(60), Admission.of(RunToken.random()))
    teardown(server, feeds, dir)(f(server, dir))
  }

  private def teardown[T](server: BridgeServer, feeds: Seq[Feed], dir: Path)(body: => T): T =
    try body
    finally try {
      server.close()
      feeds.foreach(_.close())
      feeds.foreach(fd => assert(fd.slabsLeft == 0, "shared slab left open"))
      assert(!Files.exists(server.socketPath()), "socket file left behind")
      assert(!Files.exists(server.tokenFile()), "token file left behind")
      feeds.foreach(fd => assert(fd.failure == null, s"producer failed: ${fd.failure}"))
    } finally deleteRecursively(dir)

  /** Trainers other than the first test's use numpy views: importing torch costs seconds. */
  private val Np = Seq("--numpy")

  private def assertArrived(got: Seq[Line], feed: Feed, numbers: Seq[Long]): Unit = {
    assert(got.map(_.batch) == numbers)
    for (l <- got) {
      val e = feed.expected.get(l.batch)
      assert(l.sha256 == e.sha256, s"image bytes of batch ${l.batch} differ from the Arrow batch")
      assert(l.labels == e.labels && l.indices == e.indices && l.keys == e.keys,
        s"batch ${l.batch}: $l vs $e")
      assert(l.shape == s"$Rows x$ImageBytes x1x1".replace(" x", "x"))
    }
  }

  test("every batch reaches the trainer in order with the Arrow batches' bytes; releases recycle slots") {
    val feed = new Feed(0, 0L until 24L, slots = 3)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val t = new Trainer(server.socketPath(), 0, 1, dir, Seq.empty)
      assert(t.await() == 0, t.output)
      assert(t.batches().forall(_.arrayType == "Tensor"), "torch is installed: tensors expected")
      // 24 batches through 3 slots: the producer could only finish because releases freed slots.
      assertArrived(t.batches(), feed, 0L until 24L)
      val end = t.lines().last
      assert(end.kind == "END" && end.fields(2).contains("\"batchesConsumed\": [24]"))
      assert(server.stats().batchesDelivered == 24 && server.stats().leasesRevoked == 0)
      assert(Files.getPosixFilePermissions(server.socketPath()).asScala.map(_.toString) ==
        Set("OWNER_READ", "OWNER_WRITE"))
    }
  }

  test("a trainer may write into its batches (tensors and arrays): it alone sees the writes") {
    val feeds = Seq(0, 1).map(r => new Feed(r, (0L until 24L).filter(_ % 2 == r), slots = 3))
    withBridge(2, feeds) { (server, dir) =>
      // rank 0 writes through torch tensors, rank 1 through numpy arrays; each batch's every
      // byte after hashing it: 12 batches through 3 slots, so a write that reached the slot (or
      // stayed in the trainer's mapping) would show in a later batch's bytes
      val ts = Seq(new Trainer(server.socketPath(), 0, 2, dir, Seq("--scribble")),
        new Trainer(server.socketPath(), 1, 2, dir, Seq("--scribble") ++ Np))
      ts.foreach(t => assert(t.await() == 0, t.output))
      assert(ts(0).batches().forall(_.arrayType == "Tensor"))
      ts.zip(feeds).foreach { case (t, f) => assertArrived(t.batches(), f, 0L until 12L) }
    }
  }

  test("two ranks get disjoint, equal shares while training concurrently") {
    val feeds = Seq(0, 1).map(r => new Feed(r, (0L until 20L).filter(_ % 2 == r), slots = 3))
    withBridge(2, feeds) { (server, dir) =>
      val ts = feeds.map(f => new Trainer(server.socketPath(), f.rank, 2, dir, Np))
      ts.foreach(t => assert(t.await() == 0, t.output))
      val got = ts.map(_.batches())
      got.zip(feeds).foreach { case (g, f) => assertArrived(g, f, 0L until 10L) }
      val indices = got.map(_.flatMap(_.indices).toSet)
      assert(indices(0).size == indices(1).size && indices(0).size == 10 * Rows)
      assert(indices(0).intersect(indices(1)).isEmpty)
    }
  }

  test("a killed trainer's leases are revoked and a new trainer resumes from its saved state") {
    val feed = new Feed(0, 0L until 12L, slots = 3)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val state = dir.resolve("state.json")
      val first = new Trainer(server.socketPath(), 0, 1, dir,
        Seq("--die-after", "5", "--state-out", state.toString) ++ Np)
      assert(first.await() == 137, "the first trainer should die by SIGKILL: " + first.output)
      assert(Files.readString(state).contains("\"batchesConsumed\": [5]"))
      val second = new Trainer(server.socketPath(), 0, 1, dir, Seq("--state-in", state.toString) ++ Np)
      assert(second.await() == 0, second.output)
      assertArrived(first.batches(), feed, 0L until 5L)
      assertArrived(second.batches(), feed, 5L until 12L) // no batch twice, none lost
      assert(server.stats().leasesRevoked == 1)
    }
  }

  test("without a state the next trainer first receives the batch the dead one held; a stale state is refused") {
    val feed = new Feed(0, 0L until 10L, slots = 3)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val first = new Trainer(server.socketPath(), 0, 1, dir,
        Seq("--die-after", "3", "--state-out", dir.resolve("s.json").toString) ++ Np)
      assert(first.await() == 137, first.output)
      val stale = dir.resolve("stale.json")
      Files.writeString(stale, """{"worldSize": 1, "batchesConsumed": [1]}""")
      val refused = new Trainer(server.socketPath(), 0, 1, dir,
        Seq("--state-in", stale.toString, "--expect-error") ++ Np)
      assert(refused.await() == 0, refused.output)
      val err = refused.lines().head
      assert(err.kind == "ERROR" && err.fields(1) == "BAD_RESUME")
      assert(err.fields(2).contains("Rank 0 is at batch 2 but the trainer's state says 1"))
      val second = new Trainer(server.socketPath(), 0, 1, dir, Np)
      assert(second.await() == 0, second.output)
      assertArrived(second.batches(), feed, 2L until 10L)
    }
  }

  test("bad peers are refused with clear messages while the others keep being served") {
    val gate = new CountDownLatch(1)
    val feeds = Seq(new Feed(0, 0L until 8L, 3, gate), new Feed(1, 0L until 8L, 3))
    withBridge(2, feeds) { (server, dir) =>
      val good = new Trainer(server.socketPath(), 0, 2, dir, Np)
      val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120)
      while (server.stats().trainersConnected < 1 && System.nanoTime() < deadline) Thread.sleep(50)
      val s = server.socketPath()
      assert(refusal(s, header(1, Wire.HELLO, 20)) == (2,
        "Unsupported protocol version 1: this feeder speaks version 6; use the spindle_bridge "
          + "client of this Spindle release (loader-gpu/python), which speaks version 6"))
      // clients of versions 2 (no loss weights in BATCH), 3 (no end batch in WELCOME) and 4 (no
      // pid in HELLO) are told which version to use
      for (old <- Seq(2, 3, 4)) {
        assert(refusal(s, frameOf(old, Wire.HELLO, helloTo(s, 1, 2)))._2.startsWith(
          s"Unsupported protocol version $old: this feeder speaks version 6"))
      }
      assert(refusal(s, header(Wire.VERSION, Wire.HELLO, 1 << 24)) == (3,
        "Invalid message: payload of 16777216 bytes (must be <= 1048576)"))
      assert(refusal(s, "GET / HTTP/1.1\r\n\r\n".getBytes("UTF-8"))._1 == 1)
      assert(refusal(s, frame(Wire.HELLO, ByteBuffer.allocate(3))) == (1,
        "Invalid HELLO: payload of 3 bytes is too short"))
      assert(refusal(s, frame(Wire.NEXT, ByteBuffer.allocate(8)))._2.startsWith(
        "Invalid first message: type 3"))
      assert(refusal(s, frame(Wire.HELLO, helloTo(s, 5, 2))) == (4,
        "Invalid rank: 5 (world size 2: must be 0..1)"))
      assert(refusal(s, frame(Wire.HELLO, helloTo(s, 0, 3))) == (4,
        "Invalid world size: 3 (this feeder serves world size 2)"))
      assert(refusal(s, frame(Wire.HELLO, helloTo(s, 1, 2, "cuda:0")))._1 == 9)
      assert(refusal(s, frame(Wire.HELLO, helloTo(s, 1, 2, "cpux"))) == (9, "Invalid device: 'cpux' "
        + "(must be 'cpu' or 'cuda:N' with N in 0..999)"))
      val huge = refusal(s, frame(Wire.HELLO, helloTo(s, 1, 2, "c" * 1000000)))
      assert(huge == (9, "Invalid device: '" + "c" * 64 + "…' (1000000 chars) (must be 'cpu' or "
        + "'cuda:N' with N in 0..999)"))
      val twin = new Trainer(s, 0, 2, dir, Seq("--expect-error") ++ Np)
      assert(twin.await() == 0, twin.output)
      assert(twin.lines().head.fields(1) == "RANK_TAKEN")
      assert(twin.lines().head.fields(2).contains("Rank 0 already has a trainer connected"))
      val other = new Trainer(s, 1, 2, dir, Np) // served after all the refusals
      assert(other.await() == 0, other.output)
      assertArrived(other.batches(), feeds(1), 0L until 8L)
      gate.countDown()
      assert(good.await() == 0, good.output)
      assertArrived(good.batches(), feeds(0), 0L until 8L)
      assert(server.stats().refused == 14)
    }
  }

  test("a version 5 client (no field table in BATCH) is refused by name, before its HELLO is read") {
    val feed = new Feed(0, 0L until 2L, 3)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      assert(refusal(s, frameOf(5, Wire.HELLO, helloTo(s, 0, 1))) == (2,
        "Unsupported protocol version 5: this feeder speaks version 6; use the spindle_bridge "
          + "client of this Spindle release (loader-gpu/python), which speaks version 6"))
      val t = new Trainer(s, 0, 1, dir, Np) // the rank is untouched: a current client gets it all
      assert(t.await() == 0, t.output)
      assertArrived(t.batches(), feed, 0L until 2L)
    }
  }

  test("extra fields reach the Python trainer exactly: int64 and float32 tensors, captions, token and byte lists") {
    val feeds = Seq(new Feed(0, Seq(4L, 9L, 0L, 13L, 2L, 7L), 3, fields = true),
      new Feed(1, Seq(5L, 1L, 11L, 6L, 3L, 8L), 3, fields = true))
    withBridge(2, feeds) { (server, dir) =>
      // rank 0 gets torch tensors, rank 1 numpy arrays; 6 batches through 3 slots each
      val ts = Seq(new Trainer(server.socketPath(), 0, 2, dir, Seq("--fields")),
        new Trainer(server.socketPath(), 1, 2, dir, Seq("--fields") ++ Np))
      ts.foreach(t => assert(t.await() == 0, t.output))
      for ((t, feed) <- ts.zip(feeds)) {
        assertArrived(t.batches(), feed, 0L until 6L)
        val got = t.lines().filter(_.kind == "F")
        assert(got.map(_.batch) == (0L until 6L))
        for (l <- got) assertFields(l.fields(2), feed.ids(l.batch.toInt), torch = feed.rank == 0)
      }
    }
  }

  /** The trainer's record of one batch's fields (trainer_check.py --fields) is batch `id`'s. */
  private def assertFields(json: String, id: Long, torch: Boolean): Unit = {
    val tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json)
    def longs(n: com.fasterxml.jackson.databind.JsonNode) = n.elements().asScala.map(_.asLong).toSeq
    val rows = 0 until Rows
    assert(tree.fieldNames().asScala.toSeq == Seq("id", "score", "caption", "tokens", "blob"))
    val array = if (torch) "Tensor" else "ndarray"
    assert(tree.get("id").get("type").asText == array)
    assert(longs(tree.get("id").get("values")) == rows.map(TestFields.id(id, _)))
    assert(tree.get("score").get("values").elements().asScala.map(_.floatValue).toSeq ==
      rows.map(TestFields.score(id, _)))
    assert(tree.get("caption").get("strings").elements().asScala.map(_.asText).toSeq ==
      rows.map(TestFields.caption(id, _)))
    val tokens = rows.map(TestFields.tokens(id, _).map(_.toLong))
    val blobs = rows.map(TestFields.blob(id, _).map(b => (b & 0xff).toLong))
    for ((name, want) <- Seq("tokens" -> tokens, "blob" -> blobs)) {
      val r = tree.get(name)
      assert(r.get("type").asText == "Ragged", name)
      assert(r.get("rows").elements().asScala.map(longs).toSeq == want, name)
      assert(longs(r.get("offsets")) == want.scanLeft(0L)(_ + _.size), name)
      // pad(value=-1): every row as long as the longest, filled with -1 (bytes: uint8 255)
      val fill = if (name == "blob") 255L else -1L
      val longest = want.map(_.size).max
      assert(r.get("pad").elements().asScala.map(longs).toSeq ==
        want.map(w => w ++ Seq.fill(longest - w.size)(fill)), name)
    }
  }

  test("a peer without the run's token is refused with BAD_TOKEN and never affects the rank") {
    val gate = new CountDownLatch(1)
    val feed = new Feed(0, 0L until 6L, 3, gate)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      val token = runToken(s).get
      assert(token.matches("[0-9a-f]{64}"), "32 random bytes in hex")
      assert(PosixFilePermissions.toString(Files.getPosixFilePermissions(server.tokenFile()))
        == "rw-------")
      val hint = "(a trainer must present its feed run's token: SPINDLE_RUN_TOKEN or " +
        s"SpindleLoader(token=...); this feeder wrote it to ${server.tokenFile()})"
      // Each claims rank 0 and asks to skip 2^40 batches: none may touch the rank.
      assert(refusal(s, frame(Wire.HELLO, hello(0, 1, resume = 1L << 40))) ==
        (10, "Invalid run token: none presented " + hint))
      for (bad <- Seq("0" * 64, token.take(63), token + "0", token.toUpperCase)) {
        val (code, msg) = refusal(s, frame(Wire.HELLO, hello(0, 1, token = bad, resume = 1L << 40)))
        assert((code, msg) == (10, s"Invalid run token: the ${bad.length} characters presented "
          + "are not this feed run's token " + hint))
      }
      val rogue = new Trainer(s, 0, 1, dir, Seq("--token", "f" * 64, "--expect-error") ++ Np)
      assert(rogue.await() == 0, rogue.output)
      assert(rogue.lines().head.fields(1) == "BAD_TOKEN", rogue.lines().head)
      gate.countDown()
      val good = new Trainer(s, 0, 1, dir, Np)
      assert(good.await() == 0, good.output)
      assertArrived(good.batches(), feed, 0L until 6L)
      assert(server.stats().refused == 6 && server.stats().trainersConnected == 1)
    }
  }

  test("a state's plan identity is every field but the current leg's counts, as Python derives it") {
    val state = """{"format": "spindle-loader-state/1",
      "manifest": {"sha256": "%s", "shards": 3, "samples": 90},
      "seed": -42, "epoch": 4, "batchSize": 8, "remainder": "DROP_LAST",
      "shuffleWindow": 64, "worldSize": 2, "batchesConsumed": [5, 6],
      "earlierLegs": [{"worldSize": 3, "batchesConsumed": [1, 2, 3]},
                      {"worldSize": 1, "batchesConsumed": [0]}]}""".format("cd" * 32)
    // The same state and identity as tests/test_protocol.py's.
    assert(PlanIdentity.of(state) == "format=spindle-loader-state/1\nmanifest.sha256=" + "cd" * 32
      + "\nseed=-42\nepoch=4\nbatchSize=8\nremainder=DROP_LAST\nshuffleWindow=64\nworldSize=2"
      + "\nearlierLegs=3:1,2,3;1:0")
    assert(PlanIdentity.of(state.replace("[5, 6]", "[7, 7]")) == PlanIdentity.of(state))
    assert(PlanIdentity.of("""{"worldSize": 1, "seed": 1.5, "earlierLegs": [{"worldSize": 2,
      "batchesConsumed": [1, "a"]}, 3]}""") == "format=\nmanifest.sha256=\nseed=\nepoch=\n"
      + "batchSize=\nremainder=\nshuffleWindow=\nworldSize=1\nearlierLegs=2:1,a;:")
    assert(PlanIdentity.of("") == "")
    assert(intercept[IllegalArgumentException](PlanIdentity.of("[1]")).getMessage ==
      "Invalid loader state: not a JSON object")
  }

  test("a trainer whose state is of another plan is refused, naming each differing field") {
    val m = "ab" * 32
    val feed = new Feed(0, 0L until 4L, 3)
    withBridge(1, Seq(feed), loaderState(1, m, Seq(0))) { (server, dir) =>
      val s = server.socketPath()
      def refused(state: String): String = {
        val t = new Trainer(s, 0, 1, dir,
          Seq("--state-in", stateFile(dir, state).toString, "--expect-error") ++ Np)
        assert(t.await() == 0, t.output)
        val err = t.lines().head
        assert(err.kind == "ERROR" && err.fields(1) == "BAD_RESUME", err)
        val prefix = "BAD_RESUME: Invalid resume state: it is of another plan than rank 0 is " +
          "served from: "
        val hint = " (start the trainer without a state, or restart the feed job from its state)"
        assert(err.fields(2).startsWith(prefix) && err.fields(2).endsWith(hint), err)
        err.fields(2).stripPrefix(prefix).stripSuffix(hint)
      }
      assert(refused(loaderState(0, m, Seq(0))) == "'epoch': state '0', feed '1'")
      assert(refused(loaderState(1, "cd" * 32, Seq(0))) ==
        s"'manifest.sha256': state '${"cd" * 32}', feed '$m'")
      assert(refused(loaderState(1, m, Seq(0), seed = 7, batchSize = 8)) ==
        "'seed': state '7', feed '3'; 'batchSize': state '8', feed '4'")
      assert(refused(loaderState(1, m, Seq(0),
        earlierLegs = """[{"worldSize": 2, "batchesConsumed": [1, 1]}]""")) ==
        "'earlierLegs': state '2:1,1', feed ''")
      assert(refused(loaderState(1, m, Seq(0, 0))) == "'worldSize': state '2', feed '1'")
      // The same plan, further on in the current leg: served from there.
      val good = new Trainer(s, 0, 1, dir,
        Seq("--state-in", stateFile(dir, loaderState(1, m, Seq(2))).toString) ++ Np)
      assert(good.await() == 0, good.output)
      assertArrived(good.batches(), feed, 2L until 4L)
    }
  }

  test("a rank served later: its feed task sees only a trainer whose state is of its plan") {
    implicit val ec: ExecutionContext = ExecutionContext.global
    val m = "ef" * 32
    val served = loaderState(2, m, Seq(0))
    val gate = new CountDownLatch(1)
    val feed = new Feed(0, 0L until 4L, 3, gate)
    withLateBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      val task = Future {
        val resume = server.awaitTrainer(0, Duration.ofSeconds(60), served, 4)
        server.serve(new RankFeed(0, feed.feeder, 0, served, 4))
        gate.countDown()
        resume
      }
      val stale = new Trainer(s, 0, 1, dir, Seq("--state-in",
        stateFile(dir, loaderState(1, m, Seq(3))).toString, "--expect-error") ++ Np)
      assert(stale.await() == 0, stale.output)
      assert(stale.lines().head.fields(2).startsWith("BAD_RESUME: Invalid resume state: it is "
        + "of another plan than rank 0 is served from: 'epoch': state '1', feed '2' ("),
        stale.lines().head)
      assert(!task.isCompleted, "the feed task must not start from a refused trainer's state")
      val good = new Trainer(s, 0, 1, dir, Np)
      assert(good.await() == 0, good.output)
      assert(Await.result(task, 60.seconds) == -1L)
      assertArrived(good.batches(), feed, 0L until 4L)
    }
  }

  test("an out-of-range resume is refused with BAD_RESUME; the rank's feed task and batches go on") {
    implicit val ec: ExecutionContext = ExecutionContext.global
    val gate = new CountDownLatch(1)
    val feed = new Feed(0, 0L until 6L, 3, gate)
    withLateBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      val task = Future {
        val resume = server.awaitTrainer(0, Duration.ofSeconds(60), "", 6)
        server.serve(new RankFeed(0, feed.feeder, 0, "", 6))
        gate.countDown()
        resume
      }
      // Waiting for its rank: the feed task must never see these resume points.
      for (bad <- Seq(1L << 40, 7L, -2L)) {
        assert(refusal(s, frame(Wire.HELLO, helloTo(s, 0, 1, resume = bad))) == (6,
          s"Invalid resume point: the trainer's state says $bad batches consumed, but rank 0 has "
          + "6 batches to serve (must be 0..6, or -1 for no state)"))
      }
      assert(!task.isCompleted, "the feed task must not start from a refused resume point")
      val state = dir.resolve("dead.json")
      val first = new Trainer(s, 0, 1, dir, Seq("--die-after", "2", "--state-out", state.toString) ++ Np)
      assert(first.await() == 137, first.output)
      assert(Await.result(task, 60.seconds) == -1L)
      // Served, and its trainer gone: an out-of-range resume would skip the rank's batches.
      assert(refusal(s, frame(Wire.HELLO, helloTo(s, 0, 1, resume = 1L << 40)))._2 ==
        "Invalid resume point: the trainer's state says 1099511627776 batches consumed, but rank "
        + "0 has 6 batches to serve (must be 0..6, or -1 for no state)")
      val second = new Trainer(s, 0, 1, dir, Seq("--state-in", state.toString) ++ Np)
      assert(second.await() == 0, second.output)
      assertArrived(first.batches(), feed, 0L until 2L)
      assertArrived(second.batches(), feed, 2L until 6L)
    }
  }

  test("a bridge with fixed ranks refuses a resume beyond the rank's planned batches and ends there") {
    val feed = new Feed(0, 0L until 6L, 3)
    val dir = tempDir()
    val server = BridgeServer.start(dir.resolve("bridge.sock"), 1,
      java.util.List.of(new RankFeed(0, feed.feeder, 0, "", 6)), Admission.of(RunToken.random()))
    teardown(server, Seq(feed), dir) {
      val s = server.socketPath()
      for (bad <- Seq(1L << 40, 7L)) {
        assert(refusal(s, frame(Wire.HELLO, helloTo(s, 0, 1, resume = bad))) == (6,
          s"Invalid resume point: the trainer's state says $bad batches consumed, but rank 0 has "
          + "6 batches to serve (must be 0..6, or -1 for no state)"))
      }
      val t = new Trainer(s, 0, 1, dir, Np)
      assert(t.await() == 0, t.output)
      assertArrived(t.batches(), feed, 0L until 6L) // nothing was skipped
    }
  }

  test("a far resume into a feed of unknown length never holds the rank: close() ends the skip") {
    val gate = new CountDownLatch(1) // the producer never offers: the skip waits for batches
    val feed = new Feed(0, 0L until 4L, 3, gate)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      val peer = SocketChannel.open(UnixDomainSocketAddress.of(s))
      try {
        peer.write(ByteBuffer.wrap(frame(Wire.HELLO, helloTo(s, 0, 1, resume = 1L << 40))))
        Thread.sleep(1000) // its session claims the rank and skips towards batch 2^40
        val closing = new Thread(() => server.close())
        closing.start()
        closing.join(30000)
        assert(!closing.isAlive, "close() waited for the skip (it held the rank's channel)")
      } finally {
        gate.countDown()
        peer.close()
      }
    }
  }

  /** Waits (bounded) until `cond`; fails naming `what`. */
  private def await(what: String)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for $what")
      Thread.sleep(20)
    }
  }

  test("300 idle connections: past the cap they are refused without a thread, the rest dropped") {
    val feed = new Feed(0, 0L until 4L, 3)
    val limits = Admission.of(RunToken.random()).withLimits(Duration.ofSeconds(2), 8)
    withBridge(1, Seq(feed), admission = limits) { (server, dir) =>
      val threads = ManagementFactory.getThreadMXBean
      val before = threads.getThreadCount
      val address = UnixDomainSocketAddress.of(server.socketPath())
      val idle = (0 until 300).map { _ =>
        val ch = SocketChannel.open(StandardProtocolFamily.UNIX)
        ch.connect(address)
        ch
      }
      try {
        await("every idle connection accepted") {
          val st = server.stats()
          st.connectionsOpen + st.refused >= 300
        }
        val grown = threads.getThreadCount - before
        assert(grown <= 8 + 2, s"$grown more threads for 300 idle connections (cap 8)")
        val busy = Wire.read(idle.last)
        assert(busy.`type` == Wire.ERROR && busy.payload.getShort == 11)
        assert(Wire.getString(busy.payload) == "Invalid connection: this bridge has its maximum "
          + "of 8 connections open (a peer that sends no HELLO within 2 s is dropped)")
        await("the idle connections dropped after the handshake timeout") {
          server.stats().connectionsOpen == 0
        }
        assert(Wire.read(idle.head) == null, "an idle peer is disconnected")
      } finally idle.foreach(_.close())
      assert(server.stats().refused == 300)
      val t = new Trainer(server.socketPath(), 0, 1, dir, Np)
      assert(t.await() == 0, t.output)
      assertArrived(t.batches(), feed, 0L until 4L)
    }
  }

  test("the accept thread survives accept errors: it logs, backs off and goes on") {
    val feed = new Feed(0, 0L until 3L, 3)
    val calls = new AtomicInteger()
    val flaky: BridgeServer.Acceptor = server =>
      if (calls.incrementAndGet() <= 3) throw new IOException("Too many open files")
      else server.accept()
    val dir = tempDir()
    val server = BridgeServer.start(dir.resolve("bridge.sock"), 1,
      java.util.List.of(new RankFeed(0, feed.feeder, 0, "")),
      Admission.of(RunToken.random()), flaky)
    teardown(server, Seq(feed), dir) {
      val t = new Trainer(server.socketPath(), 0, 1, dir, Np)
      assert(t.await() == 0, t.output)
      assertArrived(t.batches(), feed, 0L until 3L)
      assert(calls.get() >= 4, "accept was called again after its errors")
    }
  }

  /** Both ends of a connected Unix socket (through a listener in `dir`, closed at once). */
  private def socketPair(dir: Path): (SocketChannel, SocketChannel) = {
    val listener = java.nio.channels.ServerSocketChannel.open(StandardProtocolFamily.UNIX)
    try {
      listener.bind(UnixDomainSocketAddress.of(dir.resolve("pair.sock")))
      val mine = SocketChannel.open(listener.getLocalAddress)
      (mine, listener.accept())
    } finally {
      listener.close()
      Files.deleteIfExists(dir.resolve("pair.sock"))
    }
  }

  test("a connection that starts after close() is closed at once; its thread ends normally") {
    val feed = new Feed(0, 0L until 1L, 2)
    val dir = tempDir()
    val server = BridgeServer.start(dir.resolve("bridge.sock"), 1,
      java.util.List.of(new RankFeed(0, feed.feeder, 0, "")),
      Admission.of(RunToken.random()))
    teardown(server, Seq(feed), dir) {
      server.close() // shuts the handshake timer down
      val (mine, theirs) = socketPair(dir)
      try {
        new TrainerSession(server, theirs, 99).run() // threw RejectedExecutionException
        assert(!theirs.isOpen, "the session's channel is closed")
        assert(Wire.read(mine) == null, "the peer sees the connection closed")
      } finally mine.close()
    }
  }

  test("a connection accepted while the bridge closes is closed by the accept thread") {
    val feed = new Feed(0, 0L until 1L, 2)
    val dir = tempDir()
    val (mine, theirs) = socketPair(dir)
    val handOver = new CountDownLatch(1)
    val accepting = new CountDownLatch(1)
    val calls = new AtomicInteger()
    val late: BridgeServer.Acceptor = server =>
      if (calls.incrementAndGet() == 1) { accepting.countDown(); handOver.await(); theirs }
      else server.accept()
    val server = BridgeServer.start(dir.resolve("bridge.sock"), 1,
      java.util.List.of(new RankFeed(0, feed.feeder, 0, "")),
      Admission.of(RunToken.random()), late)
    teardown(server, Seq(feed), dir) {
      try {
        // close only once the accept thread is inside accept(): a close() that came first would
        // end the accept loop before it ever accepted, leaving nothing to test
        assert(accepting.await(30, java.util.concurrent.TimeUnit.SECONDS), "accept() was called")
        val closing = new Thread(() => server.close())
        closing.start()
        await("close() began")(scala.util.Try(server.checkOpen()).isFailure)
        handOver.countDown() // accept returns a connection after `closed` was set
        closing.join(30000)
        assert(!closing.isAlive, "close() returned")
        assert(!theirs.isOpen && Wire.read(mine) == null, "the late connection is closed")
        assert(server.stats() == new BridgeStats(0, 0, 0, 0, 0),
          "it got no session: nothing counted, nothing open")
      } finally mine.close()
    }
  }

  test("BATCH frames stay within the protocol's limit: sample keys are cut to 256 bytes") {
    // 4 keys of 400 KB: 1.6 MB of keys per batch, over the 1 MiB frame limit.
    val feed = new Feed(0, 0L until 3L, slots = 2, keyOf = (b, r) => s"k$b-$r-" + "é" * 200000)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val t = new Trainer(server.socketPath(), 0, 1, dir, Np)
      assert(t.await() == 0, t.output)
      assert(t.batches().map(_.batch) == Seq(0L, 1L, 2L))
      for (l <- t.batches()) {
        val e = feed.expected.get(l.batch)
        // "k0-0-" is 5 bytes, each é 2: 125 of them end at byte 255; a 126th would cross 256.
        assert(l.keys == e.keys.map(k => k.take(5 + 125)), s"batch ${l.batch}")
        assert(l.keys.forall(_.getBytes("UTF-8").length == 255))
        assert(l.indices == e.indices && l.sha256 == e.sha256 && l.labels == e.labels)
      }
    }
  }

  test("a socket path of another user, a non-socket file or a live socket is refused") {
    val feed = new Feed(0, Seq.empty, 2)
    withBridge(1, Seq(feed)) { (server, dir) =>
      def start(p: Path) = BridgeServer.start(p, 1,
        java.util.List.of(new RankFeed(0, feed.feeder, 0, "")),
        Admission.of(RunToken.random()))
      val live = intercept[IllegalArgumentException](start(server.socketPath()))
      assert(live.getMessage.endsWith("is in use by another bridge"))
      val file = Files.writeString(dir.resolve("not-a-socket"), "x")
      assert(intercept[IllegalArgumentException](start(file)).getMessage
        .endsWith("exists and is not a socket"))
      assume(System.getProperty("user.name") == "root", "chown needs root")
      val theirs = Files.writeString(dir.resolve("theirs.sock"), "")
      new ProcessBuilder("chown", "65534", theirs.toString).start().waitFor()
      val e = intercept[IllegalArgumentException](start(theirs))
      assert(e.getMessage == s"Invalid socket path: $theirs exists and belongs to uid 65534, "
        + "not to this process (uid 0)")
      // Owners are compared by uid: one without a passwd entry is refused like any other.
      val nameless = Files.createDirectory(dir.resolve("nameless"))
      new ProcessBuilder("chown", "4242", nameless.toString).start().waitFor()
      assert(intercept[IllegalArgumentException](start(nameless.resolve("b.sock"))).getMessage
        == s"Invalid socket directory: $nameless belongs to uid 4242, not to this process (uid 0)")
    }
  }

  /** A raw trainer for rank 0 of 1: HELLO, WELCOME, then NEXT until a BATCH; returns its number. */
  private def rawTrainer(s: Path, timeoutMs: Long = 60000L)(implicit ec: ExecutionContext)
      : (SocketChannel, Future[Long]) = {
    val ch = SocketChannel.open(StandardProtocolFamily.UNIX)
    ch.connect(UnixDomainSocketAddress.of(s))
    ch.write(ByteBuffer.wrap(frame(Wire.HELLO, helloTo(s, 0, 1))))
    assert(Wire.read(ch).`type` == Wire.WELCOME)
    ch.write(ByteBuffer.wrap(frame(Wire.NEXT, Wire.buffer(8).putLong(timeoutMs).flip())))
    (ch, Future {
      val f = Wire.read(ch)
      assert(f.`type` == Wire.BATCH, s"got ${Wire.name(f.`type`)}")
      f.payload.getLong
    })
  }

  test("a bad message after the handshake ends that trainer with ERROR; its batch goes to the next") {
    implicit val ec: ExecutionContext = ExecutionContext.global
    val gate = new CountDownLatch(1)
    val feed = new Feed(0, 0L until 6L, 3, gate)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      // NEXT's timeout is an i64 of ms: the largest waits for a batch, never overflows to TIMEOUT
      val (first, batch) = rawTrainer(s, Long.MaxValue)
      Thread.sleep(1500)
      assert(!batch.isCompleted, "NEXT(Long.MaxValue) was answered before any batch existed")
      gate.countDown()
      val held = Await.result(batch, 60.seconds)
      first.close() // without BYE: its lease is revoked and kept for the rank's next trainer
      val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
      while (server.stats().leasesRevoked < 1 && System.nanoTime() < deadline) Thread.sleep(20)
      assert(server.stats().leasesRevoked == 1)
      def release(n: Long) = Wire.buffer(8).putLong(n).flip()
      val bad = Seq[(Long => Array[Byte], (Int, String))](
        (_ => frame(Wire.RELEASE, release(99)), (7, "Invalid RELEASE: batch 99 is not held by this"
          + s" trainer (held: [$held])")),
        (_ => header(Wire.VERSION, 77, 0), (1, "Invalid message type 77 after the handshake")),
        (_ => frame(Wire.HELLO, helloTo(s, 0, 1)), (1, "Invalid message type 1 after the handshake")),
        (_ => frame(Wire.NEXT, ByteBuffer.allocate(3)), (1, "Invalid NEXT: payload of 3 bytes is too short")),
        (n => frame(Wire.RELEASE, Wire.buffer(12).putLong(n).putInt(0).flip()),
          (1, "Invalid RELEASE: 4 unexpected trailing byte(s)")),
        (_ => frame(Wire.BYE, ByteBuffer.allocate(1)), (1, "Invalid BYE: 1 unexpected trailing byte(s)")),
        (_ => "JUNK".getBytes("UTF-8") ++ new Array[Byte](8),
          (1, "Not a Spindle bridge peer: bad magic (expected \"SPDL\")")),
        (_ => header(Wire.VERSION, Wire.RELEASE, 1 << 24),
          (3, "Invalid message: payload of 16777216 bytes (must be <= 1048576)")))
      for ((message, (code, text)) <- bad) {
        val (ch, got) = rawTrainer(s)
        try {
          val n = Await.result(got, 60.seconds)
          assert(n == held, "the batch a dropped trainer held goes to the rank's next trainer")
          ch.write(ByteBuffer.wrap(message(n)))
          val f = Wire.read(ch)
          assert(f.`type` == Wire.ERROR)
          assert((f.payload.getShort.toInt, Wire.getString(f.payload)) == (code, text))
          assert(Wire.read(ch) == null, "the server closes the connection after an ERROR")
        } finally ch.close()
      }
      val trainer = new Trainer(s, 0, 1, dir, Np)
      assert(trainer.await() == 0, trainer.output)
      assertArrived(trainer.batches(), feed, held until 6L)
      assert(server.stats().refused == bad.size)
    }
  }

  test("a trainer refused with BUSY retries with back-off and is served once a connection leaves") {
    val feed = new Feed(0, 0L until 4L, 3)
    val limits = Admission.of(RunToken.random()).withLimits(Duration.ofSeconds(2), 1)
    withBridge(1, Seq(feed), admission = limits) { (server, dir) =>
      val idle = SocketChannel.open(StandardProtocolFamily.UNIX) // the one connection, silent
      idle.connect(UnixDomainSocketAddress.of(server.socketPath()))
      try {
        await("the idle connection accepted") { server.stats().connectionsOpen == 1 }
        val t = new Trainer(server.socketPath(), 0, 1, dir, Np)
        await("the trainer refused with BUSY") { server.stats().refused >= 1 }
        // the client tries again, backing off, until the idle peer is dropped (2 s), then is served
        assert(t.await() == 0, t.output)
        assertArrived(t.batches(), feed, 0L until 4L)
        assert(Wire.read(idle) == null, "the idle peer was dropped at the handshake timeout")
      } finally idle.close()
    }
  }

  test("a trainer whose HELLO arrives before its rank's last connection read its BYE gets the rank") {
    implicit val ec: ExecutionContext = ExecutionContext.global
    val feed = new Feed(0, 0L until 6L, 3)
    withBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      val (first, batch) = rawTrainer(s)
      val n = Await.result(batch, 60.seconds)
      val second = SocketChannel.open(StandardProtocolFamily.UNIX)
      try {
        second.connect(UnixDomainSocketAddress.of(s))
        second.write(ByteBuffer.wrap(frame(Wire.HELLO, helloTo(s, 0, 1))))
        Thread.sleep(300) // the second HELLO is read while the first trainer still holds the rank
        first.write(ByteBuffer.wrap(frame(Wire.BYE, Wire.buffer(0))))
        first.close()
        val f = Wire.read(second)
        assert(f.`type` == Wire.WELCOME, s"got ${Wire.name(f.`type`)}: ${
          if (f.`type` == Wire.ERROR) { f.payload.getShort; Wire.getString(f.payload) } else ""}")
        assert((f.payload.getInt, f.payload.getInt, f.payload.getLong) == (0, 1, n + 1),
          "the rank goes on after the batch the first trainer finished with its BYE")
        second.write(ByteBuffer.wrap(frame(Wire.BYE, Wire.buffer(0))))
      } finally second.close()
      val rest = new Trainer(s, 0, 1, dir, Np)
      assert(rest.await() == 0, rest.output)
      assertArrived(rest.batches(), feed, (n + 1) until 6L)
      assert(server.stats().refused == 0)
    }
  }

  test("a trainer that keeps a batch past the lease timeout is named by pid and batch, and told so") {
    val feed = new Feed(0, 0L until 8L, 2, lease = Some(Duration.ofSeconds(1)))
    withBridge(1, Seq(feed)) { (server, dir) =>
      val s = server.socketPath()
      val ch = SocketChannel.open(StandardProtocolFamily.UNIX)
      try {
        ch.connect(UnixDomainSocketAddress.of(s))
        ch.write(ByteBuffer.wrap(frame(Wire.HELLO, helloTo(s, 0, 1, pid = 4242))))
        assert(Wire.read(ch).`type` == Wire.WELCOME)
        ch.write(ByteBuffer.wrap(frame(Wire.NEXT, Wire.buffer(8).putLong(60000L).flip())))
        val b = Wire.read(ch)
        assert(b.`type` == Wire.BATCH && b.payload.getLong == 0L)
        // the producer fills the other slot, then waits for this one: the lease runs out
        await("the feeder failed on the late lease") { feed.failure != null }
        assert(feed.failure.getMessage.contains("was not released within 1000 ms"), feed.failure)
        assert(server.heldBatches(0).get ==
          new BridgeServer.HeldBatches(0, "pid 4242, connection 1", java.util.List.of(0L)))
        ch.write(ByteBuffer.wrap(frame(Wire.NEXT, Wire.buffer(8).putLong(60000L).flip())))
        val f = Wire.read(ch)
        assert(f.`type` == Wire.ERROR && f.payload.getShort == 8)
        assert(Wire.getString(f.payload) == "Feeder for rank 0 failed: this trainer (pid 4242, "
          + "connection 1) held batch(es) [0] longer than the feeder's lease timeout without "
          + "releasing them (a trainer releases a batch when it asks for the next one, or closes "
          + "its loader)")
        assert(server.heldBatches(0).isEmpty, "the refused trainer left the rank")
      } finally ch.close()
      feed.failure = null // the producer's failure was the point
    }
  }

  test("a feeder on memory another process cannot map is refused at start") {
    val feeder = GpuFeeder.open(new HostDevice(), FeederConfig.of(2, NormalizeSpec.raw(4, 1, 1)))
    try {
      val e = intercept[IllegalArgumentException](new RankFeed(0, feeder, 0, ""))
      assert(e.getMessage.contains("whose memory another process cannot map"))
    } finally feeder.close(Duration.ZERO)
  }

  test("a feeder whose batches a BATCH message cannot describe is refused at start") {
    val feeder = GpuFeeder.open(new SharedMemoryDevice(),
      FeederConfig.of(BatchKeys.MAX_ROWS + 1, NormalizeSpec.raw(1, 1, 1)).withSlots(2))
    try {
      val e = intercept[IllegalArgumentException](new RankFeed(0, feeder, 0, ""))
      assert(e.getMessage == "Invalid feeder for rank 0: batches of 32769 rows (a BATCH message "
        + "carries at most 32768)")
    } finally feeder.close(Duration.ZERO)
  }

  test("pip installs the client into a fresh virtual environment offline, where it imports") {
    val dir = tempDir()
    try {
      // a copy: setuptools builds in the source tree (build/, *.egg-info)
      val src = Files.createDirectories(dir.resolve("src"))
      Files.copy(Scripts.resolve("pyproject.toml"), src.resolve("pyproject.toml"))
      Files.copy(Scripts.resolve("MANIFEST.in"), src.resolve("MANIFEST.in"))
      Files.copy(Scripts.resolve("_build/spindle_build.py"),
        Files.createDirectories(src.resolve("_build")).resolve("spindle_build.py"))
      val pkg = Files.createDirectories(src.resolve("spindle_bridge"))
      Files.list(Scripts.resolve("spindle_bridge")).iterator().asScala
        .filter(_.toString.endsWith(".py")).foreach(f => Files.copy(f, pkg.resolve(f.getFileName)))
      val venv = dir.resolve("venv")
      def run(cmd: String*): String = {
        val pb = new ProcessBuilder(cmd: _*).directory(dir.toFile).redirectErrorStream(true)
        pb.environment().put("PIP_NO_INDEX", "1") // offline: no package index
        pb.environment().remove("PYTHONPATH")
        val p = pb.start()
        val out = new String(p.getInputStream.readAllBytes(), "UTF-8")
        assert(p.waitFor(300, TimeUnit.SECONDS) && p.exitValue() == 0, s"${cmd.mkString(" ")}: $out")
        out
      }
      run(Python, "-m", "venv", "--system-site-packages", venv.toString)
      val py = venv.resolve("bin/python").toString
      // --system-site-packages reaches the base interpreter's packages only; where the test's
      // python3 is itself a virtual environment (GPU images keep torch and numpy in one), its
      // packages are reached through a .pth file, as a user's nested environment would
      val parentSites = run(Python, "-c", "import site; print('\\n'.join(site.getsitepackages()))")
      val purelib = run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").trim
      Files.write(Path.of(purelib, "spindle-test-parent.pth"), parentSites.getBytes("UTF-8"))
      // plain pip: build isolation on, nothing to download (the backend uses the interpreter's
      // setuptools); what a user types
      run(py, "-m", "pip", "install", src.toString)
      val got = run(py, "-c", "import spindle_bridge as s; print(s.__file__); print(s.VERSION); "
        + "print(s.SpindleLoader.from_env.__name__)")
      val lines = got.linesIterator.toSeq
      assert(lines.size == 3 && lines(0).startsWith(venv.toString + "/lib/") && lines(1) == "6"
        && lines(2) == "from_env", got)
    } finally deleteRecursively(dir)
  }

  test("the Python client's protocol unit tests pass") {
    val pb = new ProcessBuilder(Python, "-m", "unittest", "discover", "-s",
      Scripts.resolve("tests").toString, "-v").redirectErrorStream(true)
    pb.environment().put("PYTHONDONTWRITEBYTECODE", "1")
    val p = pb.start()
    val out = new String(p.getInputStream.readAllBytes(), "UTF-8")
    assert(p.waitFor() == 0, out)
    assert(out.contains("OK") && !out.contains("Ran 0 tests"), out)
  }

}
