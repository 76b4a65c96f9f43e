package dev.spindle.spark.manifest

import java.io.IOException
import java.nio.file.Files

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * A folder a preprocess job is writing, or whose first job was killed before its commit (its lock,
 * no manifest), is refused as an input saying so; a `_temporary/` folder alone (another writer's,
 * Spark's) leaves a folder read as before. On local disk; `S3CommitSuite` kills a real job on S3.
 */
class UncommittedOutputSuite extends AnyFunSuite {
  private val conf = new Configuration()

  private def list(input: String): Manifest =
    new ShardCatalog(conf, 1000).list(input, ShardCatalog.Counter.onThisThread(conf))

  test("a folder holding a preprocess job's lock and no manifest is refused, saying it holds no committed output") {
    TestFiles.withTempDir("uncommitted") { dir =>
      val out = FeedData.tars(dir.resolve("out"), Seq(3, 2))
      Files.writeString(out.resolve(UncommittedOutput.LOCK), """{"job":"1a2b"}""")
      val e = intercept[IOException](list(out.toString))
      assert(e.getMessage.startsWith(s"Input $out holds no committed preprocess output: it has no " +
        "_manifest.json but the lock _spindle_lock.json of a preprocess job"), e.getMessage)
      assert(e.getMessage.contains(s"run preprocess with --output $out again"), e.getMessage)
    }
  }

  test("a _temporary folder without Spindle's lock is another writer's: the folder is read as before") {
    TestFiles.withTempDir("spark-temporary") { dir =>
      val in = FeedData.tars(dir.resolve("in"), Seq(3, 2))
      Files.write(Files.createDirectories(in.resolve("_temporary/0")).resolve("part-00000.parquet"),
        Array[Byte](1, 2, 3))
      assert(list(in.toString).totalSamples() == 5L)
    }
  }
}
