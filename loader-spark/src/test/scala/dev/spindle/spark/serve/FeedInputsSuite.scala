package dev.spindle.spark.serve
import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Path, StandardCopyOption}
import java.util.zip.GZIPOutputStream

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.plan.Remainder
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.scalatest.concurrent.TimeLimits
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.SpanSugar._
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.feed.FeedProperties

/** Input layouts beyond a folder of tars: .tgz shards, brace patterns, a copied input's cache. */
class FeedInputsSuite extends AnyFunSuite with SparkFixture with FeedProperties with TimeLimits {
  import FeedData._

  private def status(r: FeedReport) =
    r.get("manifest").asInstanceOf[java.util.Map[String, AnyRef]].get("status").toString

  private def samples(r: FeedReport) =
    r.get("manifest").asInstanceOf[java.util.Map[String, AnyRef]].get("samples")

  /** `tars` compressed: `shard-NNN.tgz`. */
  private def tgzs(dir: Path, counts: Seq[Int]): Path = {
    tars(dir, counts)
    Files.list(dir).iterator().asScala.toList.foreach { tar =>
      val out = new ByteArrayOutputStream()
      val gz = new GZIPOutputStream(out)
      gz.write(Files.readAllBytes(tar))
      gz.close()
      Files.write(dir.resolve(tar.getFileName.toString.replace(".tar", ".tgz")), out.toByteArray)
      Files.delete(tar)
    }
    dir
  }

  test(".tgz shards: per-rank digests equal the plan's over 1 and 4 partitions and threads") {
    TestFiles.withTempDir("feed-tgz") { dir =>
      checkDigests(tgzs(dir.resolve("in"), Counts).toString, Seq(1, 4), Seq(1, 4))
    }
  }

  test("a truncated .tgz delivers the samples before the damage; the rest is quarantined, no hang") {
    TestFiles.withTempDir("feed-tgz-cut") { dir =>
      val in = tgzs(dir.resolve("in"), Seq(13, 7))
      val shard = in.resolve("shard-001.tgz")
      val gz = Files.readAllBytes(shard)
      Files.write(shard, gz.take(gz.length * 2 / 3))
      val m = manifest(in)
      val counted = m.shards.get(1).samples // the samples before the cut, then the damage
      assert(counted > 1 && counted < 8, counted)
      val r = failAfter(120.seconds)(feedOn(in.toString, "--world-size", "2", "--batch-size", "4",
        "--remainder", "PAD", "--conf", "spark.spindle.maxFailures=3"))
      assert(digests(r, 0) == planDigests(m, spec(0, 0, 2, 4, Remainder.PAD)))
      assert(ranks(r).map(_("samples").asInstanceOf[Long]).sum == 13L + counted)
      val q = quarantine(r)
      // the damage, after the sample the cut fell in when it fell inside that sample's content
      assert(q.last("key") == "(rest of shard)" && q.last("index") == 13L + counted - 1, q)
      assert(q.size <= 2 && q.forall(_("shard").toString.endsWith("shard-001.tgz")), q)
      assert(q.forall(_("reason").toString.contains("the gzip stream of file:" + shard)), q)
      assert(q.last("reason").toString.contains("Unexpected end of ZLIB input stream"))
      assert(r.get("failures") == q.size.toLong)
    }
  }

  test("a brace pattern is an input: the same manifest numbering as the folder, without listing it") {
    TestFiles.withTempDir("feed-brace") { dir =>
      val in = tars(dir.resolve("in"), Counts)
      Files.write(in.resolve("stray.txt"), "not named by the pattern".getBytes)
      val pattern = in.toString + "/shard-{000..004}.tar"
      assert(manifestOf(pattern).input == "file:" + pattern)
      checkDigests(pattern, Seq(2), Seq(2))
      // a state saved on the folder resumes on the pattern: same shards, same fingerprint
      val saved = dir.resolve("state.json")
      feedOn(in.toString, "--world-size", "2", "--batch-size", "4", "--stop-after-batches", "2",
        "--save-state", saved.toString)
      val resumed = feedOn(pattern, "--world-size", "2", "--resume", saved.toString)
      assert(resumed.get("images") == 64L - 16L)
      assert(status(resumed).startsWith("not cached: the input is a brace pattern"))
      val cached = Seq("--world-size", "2", "--batch-size", "4", "--manifest", dir.resolve("m.json").toString)
      assert(status(feedOn(pattern, cached: _*)) == "created")
      assert(status(feedOn(pattern, cached: _*)) == "reused")
    }
  }

  test("a brace pattern that is malformed, too large or names a missing shard is a clear error") {
    TestFiles.withTempDir("feed-brace-bad") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 3))
      val missing = intercept[java.io.IOException](feedOn(in.toString + "/shard-{000..003}.tar", "--world-size", "1"))
      assert(missing.getMessage.contains("2 of 4 shards of file:" + in + "/shard-{000..003}.tar cannot be used: file:"
        + in + "/shard-002.tar does not exist; file:" + in + "/shard-003.tar does not exist"), missing.getMessage)
      val malformed = intercept[IllegalArgumentException](feedOn(in.toString + "/shard-{000..001.tar", "--world-size", "1"))
      assert(malformed.getMessage.contains("at position " + (in.toString.length + 7) + ": '{' is never closed"))
      val huge = intercept[IllegalArgumentException](feedOn(in.toString + "/s-{0..9999}-{0..9999}.tar", "--world-size", "1"))
      assert(huge.getMessage.contains("names more than 10000000 shards"))
      val kind = intercept[IllegalArgumentException](feedOn(in.toString + "/shard-{000..001}.zip", "--world-size", "1"))
      assert(kind.getMessage.contains("shard-000.zip, which is not a shard file (tar shards: .tar, .tar.gz, .tgz,"),
        kind.getMessage)
    }
  }

  /** Copies a folder's files keeping their modification times (`cp -a`). */
  private def copyTree(from: Path, to: Path): Path = {
    Files.createDirectories(to)
    Files.list(from).iterator().asScala.foreach(f =>
      Files.copy(f, to.resolve(f.getFileName), StandardCopyOption.COPY_ATTRIBUTES))
    to
  }

  test("a cached manifest is bound to the input it is used with, never read as its original") {
    TestFiles.withTempDir("feed-copy") { dir =>
      val args = Seq("--world-size", "2", "--batch-size", "3")
      val sample = tars(dir.resolve("sample"), Seq(9, 9))
      assert(status(feedOn(sample.toString, args: _*)) == "created")
      // `cp -r sample sample2` plus one shard: the copied cache must not pass for sample2's shards
      val sample2 = copyTree(sample, dir.resolve("sample2"))
      TestFiles.writeTar(sample2.resolve("shard-002.tar"), rows(Seq(6)).head.zipWithIndex.flatMap {
        case (s, j) => Seq(f"t$j.png" -> s.image, f"t$j.cls" -> TestFiles.ascii(s.label.toString))
      })
      val e = intercept[IllegalStateException](feedOn(sample2.toString, args: _*))
      assert(e.getMessage.contains(s"file:$sample2/shard-002.tar: added"), e.getMessage)
      assert(e.getMessage.contains(s"written for file:$sample, checked against the input file:$sample2"),
        e.getMessage)
      val recounted = feedOn(sample2.toString, (args ++ Seq("--conf", "spark.spindle.feed.manifestChanged=recount")): _*)
      assert(status(recounted) == "recounted" && samples(recounted) == 24L)
      assert(ranks(recounted).map(_("samples").asInstanceOf[Long]).sum == 24L)
      // an exact copy reuses the cache for its own shards: the original may be gone
      val sample3 = copyTree(sample, dir.resolve("sample3"))
      TestFiles.deleteRecursively(sample)
      val reused = feedOn(sample3.toString, args: _*)
      assert(status(reused) == s"reused (written for file:$sample)")
      assert(samples(reused) == 18L && reused.get("images") == 18L)
    }
  }
}
