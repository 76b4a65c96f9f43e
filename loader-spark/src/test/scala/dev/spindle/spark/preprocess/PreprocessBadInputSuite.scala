package dev.spindle.spark.preprocess
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.shard.{SampleLimits, Shard, ShardFormat}
import dev.spindle.spark.testkit.{ArrowFiles, BadImages, SparkFixture, TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.SampleImages
import dev.spindle.spark.samples.ShardSamples

class PreprocessBadInputSuite extends AnyFunSuite with SparkFixture {
  private def good(i: Int) = SampleImages.jpeg(5L, i, 64, 48)

  private def run(in: Path, out: Path, budget: String) =
    PreprocessJob.run(spark, in.toString, out.toString, false, Map(
      "spark.spindle.image.size" -> "16", "spark.spindle.batchSize" -> "4",
      "spark.spindle.maxFailures" -> budget).asJava)

  test("bad samples are quarantined with shard, key and reason; good ones are all written") {
    TestFiles.withTempDir("bad") { dir =>
      val in = TestSamples.mixedShard(dir.resolve("in"))
      val report = run(in, dir.resolve("out"), budget = "10")
      assert(report.get("images") == 6L)
      assert(report.get("samples") == 10L)
      assert(report.get("failures") == 4L)
      val q = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      val byKey = q.map(e => e.get("key").toString -> e.get("reason").toString).toMap
      assert(byKey.keySet == Set("garbage", "truncated", "huge", "nolabel"))
      assert(q.forall(_.get("shard").toString.endsWith("mixed.tar")))
      assert(byKey("nolabel").contains("no label entry (.cls or .label)"))
      assert(byKey("huge").contains("huge.png"))
      assert(byKey("huge").toLowerCase.contains("pixel"))
      assert(byKey("garbage").startsWith("cannot decode garbage.jpg"), byKey("garbage"))
      assert(byKey("truncated").contains("truncated.jpg"))
      val rows = ArrowFiles.readAll(dir.resolve("out"))
      assert(rows.map(_.key) == Seq("g0", "g1", "g2", "g3", "g4", "g5"))
      // every sample's index is either delivered or listed
      val indices = rows.map(_.index) ++ q.map(_.get("index").asInstanceOf[Number].longValue)
      assert(indices.sorted == (0L until 10L))
    }
  }

  test("JPEGs with lying headers and images over maxDecodeBytes are quarantined, not written") {
    TestFiles.withTempDir("lying") { dir =>
      val jpeg = good(7) // a real 64x48 JPEG
      val in = Files.createDirectories(dir.resolve("in"))
      TestFiles.writeTar(in.resolve("lies.tar"), Seq(
        "g0.jpg" -> good(0), "g0.cls" -> ascii("0"),
        "huge.jpg" -> BadImages.jpegDeclaring(jpeg, 13000, 13000), "huge.cls" -> ascii("1"),
        "short.jpg" -> BadImages.jpegDeclaring(jpeg, 80, 64), "short.cls" -> ascii("2"),
        "big.jpg" -> SampleImages.jpeg(5L, 9, 1600, 1200), "big.cls" -> ascii("3"),
        "g1.jpg" -> good(1), "g1.cls" -> ascii("4")))
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, Map(
        "spark.spindle.image.size" -> "16", "spark.spindle.batchSize" -> "4",
        "spark.spindle.maxFailures" -> "10",
        "spark.spindle.image.maxDecodeBytes" -> "4000000").asJava)
      val q = report.get("quarantine")
        .asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      val byKey = q.map(e => e.get("key").toString -> e.get("reason").toString).toMap
      assert(byKey.keySet == Set("huge", "short", "big"))
      // refused from the header, before any pixel buffer: the reason is the header check's
      assert(byKey("huge").contains("cannot decode huge.jpg: Corrupt JPEG: header declares"
        + " 13000x13000 (3962563 blocks in its first scan, at least 990641 bytes of scan data)"))
      assert(byKey("short").contains("cannot decode short.jpg: Corrupt JPEG: premature end of"
        + " data in scan 1 at MCU 12 of 20"))
      val big = ("cannot decode big.jpg: Image too large to decode: 1600x1200 JPEG needs \\d+"
        + " bytes \\(spark.spindle.image.maxDecodeBytes 4000000\\)").r
      assert(big.findFirstIn(byKey("big")).isDefined, byKey("big"))
      assert(ArrowFiles.readAll(dir.resolve("out")).map(_.key) == Seq("g0", "g1"))
    }
  }

  test("past the failure budget the job fails with the first causes and commits nothing") {
    TestFiles.withTempDir("budget") { dir =>
      val in = TestSamples.mixedShard(dir.resolve("in"))
      val out = dir.resolve("out")
      val e = intercept[PreprocessJob.JobFailure](run(in, out, budget = "2"))
      assert(e.getMessage.contains("Failure budget exceeded"))
      assert(e.getMessage.contains("Nothing was committed"))
      // which bad samples failed before the task stopped depends on its threads: any three or
      // more of the four, each named with its shard and reason
      val causes = e.getMessage.linesIterator.drop(1).map(_.trim).toSeq
      val cause = """mixed\.tar \[(\w+)\]:""".r
      val keys = causes.flatMap(c => cause.findFirstMatchIn(c).map(_.group(1)))
      assert(keys.size == causes.size && keys.size >= 3, e.getMessage)
      assert(keys.toSet.subsetOf(Set("garbage", "truncated", "huge", "nolabel")), e.getMessage)
      assert(causes.forall(c => c.contains("cannot decode") || c.contains("no label entry")),
        e.getMessage)
      assert(!Files.exists(out) || Files.list(out).count() == 0, "output left behind: " + out)
      val byFraction = intercept[PreprocessJob.JobFailure](run(in, dir.resolve("out2"), budget = "1%"))
      assert(byFraction.getMessage.contains("4 of 10 samples quarantined"))
    }
  }

  test("an input without shards fails before any task runs, naming the path, and leaves no output folder") {
    TestFiles.withTempDir("noshards") { dir =>
      Files.write(dir.resolve("notes.txt"), ascii("x"))
      val e = intercept[java.io.IOException](run(dir, dir.resolve("new/out"), budget = "0"))
      assert(e.getMessage.contains("No shards under " + dir))
      assert(!Files.exists(dir.resolve("new")), "the failed job left the folders it created")
    }
  }

  test("a missing input fails naming it, and leaves no output folder behind") {
    TestFiles.withTempDir("noinput") { dir =>
      val e = intercept[java.io.FileNotFoundException](
        run(dir.resolve("typo"), dir.resolve("out"), budget = "0"))
      assert(e.getMessage == "Input does not exist: " + dir.resolve("typo"))
      assert(!Files.exists(dir.resolve("out")))
    }
  }

  test("an invalid configuration value fails naming the key and value") {
    TestFiles.withTempDir("badconf") { dir =>
      val e = intercept[IllegalArgumentException](
        PreprocessJob.run(spark, dir.toString, dir.resolve("o").toString, false,
          Map("spark.spindle.batchSize" -> "-3").asJava))
      assert(e.getMessage == "Invalid value for spark.spindle.batchSize: '-3' (must be an integer > 0)")
    }
  }

  test("past 100 quarantined samples the report says how many and lists all of them beside it") {
    TestFiles.withTempDir("many") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      val entries = (0 until 140).flatMap { i =>
        val label = if (i % 10 == 9) ascii("1") else ascii("not-a-number")
        Seq(f"s$i%03d.jpg" -> good(i % 3), f"s$i%03d.cls" -> label)
      }
      TestFiles.writeTar(in.resolve("many.tar"), entries)
      val report = run(in, dir.resolve("out"), budget = "200")
      assert(report.get("failures") == 126L)
      assert(report.get("quarantine_total") == 126L)
      assert(report.get("quarantine_truncated") == true)
      val listed = report.get("quarantine").asInstanceOf[java.util.List[_]]
      assert(listed.size == 100)
      val file = dir.resolve("report.json")
      report.write(file)
      val written = dev.spindle.spark.metrics.JobReport.read(file)
      assert(written.get("quarantine_file") == dir.resolve("report.quarantine.jsonl").toString)
      val lines = Files.readAllLines(dir.resolve("report.quarantine.jsonl")).asScala
      assert(lines.size == 126)
      val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
      val indices = lines.map(l => mapper.readTree(l).get("index").asLong)
      assert(lines.forall(_.contains("not-a-number")))
      val delivered = ArrowFiles.readAll(dir.resolve("out")).map(_.index)
      assert((indices ++ delivered).sorted == (0L until 140L))
    }
  }

  test("labels outside the rule or not below spark.spindle.numClasses are quarantined with the value") {
    TestFiles.withTempDir("labels") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      TestFiles.writeTar(in.resolve("l.tar"), Seq("ok.jpg" -> good(0), "ok.cls" -> ascii("9\n"),
        "ten.jpg" -> good(1), "ten.cls" -> ascii("10"), "neg.jpg" -> good(2), "neg.cls" -> ascii("-1")))
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, Map(
        "spark.spindle.image.size" -> "16", "spark.spindle.maxFailures" -> "2",
        "spark.spindle.numClasses" -> "10").asJava)
      val q = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(q.map(_.get("key")) == Seq("ten", "neg"))
      assert(q(0).get("reason").toString.endsWith(
        "label '10' in ten.cls is not below spark.spindle.numClasses=10"))
      assert(q(1).get("reason").toString.endsWith(
        "label '-1' in neg.cls is not a plain decimal number (ASCII digits 0-9 only, no sign)"))
      assert(ArrowFiles.readAll(dir.resolve("out")).map(r => r.key -> r.label) == Seq("ok" -> 9))
    }
  }

  /** Three good samples, then a header whose size field is negative, then two more samples. */
  private def negativeSizeTar(file: Path): Path = {
    val before = (0 until 3).flatMap(i => Seq(TarBlocks.file(s"n$i.jpg", good(i)),
      TarBlocks.file(s"n$i.cls", ascii("1"))))
    val bad = TarBlocks.base256Size(TarBlocks.header(ascii("n3.jpg"), 0), -1)
    val after = (4 until 6).flatMap(i => Seq(TarBlocks.file(s"n$i.jpg", good(i)),
      TarBlocks.file(s"n$i.cls", ascii("1"))))
    Files.write(file, TarBlocks.tar(before ++ Seq(bad) ++ after: _*))
  }

  test("a negative size field is the shard's damage: the job goes on and lists what it lost") {
    TestFiles.withTempDir("negative") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      TestFiles.writeTar(in.resolve("a.tar"), (0 until 4).flatMap(i =>
        Seq(s"a$i.jpg" -> good(i), s"a$i.cls" -> ascii("0"))))
      negativeSizeTar(in.resolve("b.tar"))
      val report = run(in, dir.resolve("out"), budget = "2")
      assert(report.get("images") == 7L)
      assert(report.get("samples") == 8L)
      val q = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(q.map(e => (e.get("key"), e.get("index"))) == Seq(("(rest of shard)", 7L)))
      assert(q.head.get("shard").toString.endsWith("b.tar"))
      assert(q.head.get("reason").toString.contains("entry 'n3.jpg': size field is negative"))
      val rows = ArrowFiles.readAll(dir.resolve("out"))
      assert((rows.map(_.index) ++ q.map(_.get("index").asInstanceOf[Number].longValue)).sorted ==
        (0L until 8L))
    }
  }

  test("every planned sample a shard does not yield is listed on its own, by position") {
    TestFiles.withTempDir("unread") { dir =>
      val shrunk = TestFiles.writeTar(dir.resolve("shrunk.tar"), (0 until 3).flatMap(i =>
        Seq(s"s$i.jpg" -> good(i), s"s$i.cls" -> ascii("0"))))
      val damaged = negativeSizeTar(dir.resolve("damaged.tar"))
      // counted when each shard held 5 samples; since then one lost two, the other was damaged
      def planned(p: Path) = new Shard(p.toUri.toString, ShardFormat.TAR, Files.size(p), 0L, 5L,
        java.util.List.of())
      val source = new ShardSamples(java.util.List.of(planned(shrunk), planned(damaged)),
        Array(0L, 5L), new Configuration(), new SampleLimits(1 << 20, 0))
      val got = source.asScala.toSeq
      source.close()
      assert(got.map(l => (l.sample.key, l.index)) == Seq(("s0", 0L), ("s1", 1L), ("s2", 2L),
        ("(unread #3)", 3L), ("(unread #4)", 4L), ("n0", 5L), ("n1", 6L), ("n2", 7L),
        ("(rest of shard)", 8L), ("(unread #4)", 9L)))
      assert(got(3).sample.problem == "the shard ended before sample 3 (the manifest counted 5);"
        + " did it change since it was counted?")
      assert(got(9).sample.problem.startsWith(
        "not read: the shard is damaged before it: entry 'n3.jpg': size field is negative"))
      assert(source.samples == 10L)
    }
  }
}
