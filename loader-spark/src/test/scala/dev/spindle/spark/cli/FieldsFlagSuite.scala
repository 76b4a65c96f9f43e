package dev.spindle.spark.cli

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.{ArrowFiles, CaptionData, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `--fields` on the command line: checked before Spark starts, naming the flag; `preprocess`
 * writes the declared extra fields; `feed` delivers them.
 */
class FieldsFlagSuite extends AnyFunSuite {
  test("--fields: a bad declaration fails before Spark, preprocess writes the fields, feed runs with them") {
    TestFiles.withTempDir("fields-flag") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 1, perShard = 4).toString
      val out = dir.resolve("out").toString
      val (code, _, err) = Cli.run("preprocess", "--input", in, "--output", out,
        "--fields", "image=jpg,caption=txt:strin", "--master", "no-such-master://x")
      assert(code != 0)
      assert(err.contains("Invalid value for --fields: 'image=jpg,caption=txt:strin' (entry 'caption=txt:strin':" +
        " unknown type 'strin' (valid types: image, int32, int64"), err)

      val (ok, _, okErr) = Cli.run("preprocess", "--input", in, "--output", out, "--size", "16",
        "--fields", "image=jpg,label=cls,caption=txt", "--master", "local[2]", "--no-ui", "--progress", "never")
      assert(ok == 0, okErr)
      val (schema, rows) = ArrowFiles.read(ArrowFiles.partFiles(dir.resolve("out")).head)
      assert(schema.getFields.asScala.map(_.getName).toSeq == Seq("image", "label", "key", "index", "caption"))
      assert(rows.size == 4)

      val (fed, _, feedErr) = Cli.run("feed", "--input", in, "--world-size", "1", "--size", "16", "--batch-size", "2",
        "--fields", "image=jpg,label=cls,caption=txt", "--master", "local[2]", "--no-ui", "--progress", "never")
      assert(fed == 0, feedErr)
    }
  }

  test("--fields without an image: preprocess, feed and train take it (no refusal before Spark)") {
    TestFiles.withTempDir("fields-noimage") { dir =>
      val in = dev.spindle.spark.testkit.TextCorpus.writeTars(dir.resolve("in"), shards = 1, perShard = 2).toString
      java.nio.file.Files.writeString(dir.resolve("t.py"), "raise SystemExit('not run')\n")
      for ((args, script) <- Seq(
          Seq("preprocess", "--output", dir.resolve("out").toString) -> Nil,
          Seq("feed", "--world-size", "1") -> Nil,
          Seq("train", "--world-size", "1") -> Seq(dir.resolve("t.py").toString))) {
        val (code, _, err) = Cli.run(args ++ Seq("--input", in, "--fields", "text=txt,tokens=tok:list<int32>",
          "--master", "no-such-master://x") ++ script: _*)
        assert(code != 0, args) // each fails on the master, not on the declaration
        assert(!err.contains("declares no field named 'image'"), err)
        assert(err.contains("no-such-master"), err)
      }
    }
  }

  test("preprocess --fields without an image: every text sample written, no image column, said in samples") {
    TestFiles.withTempDir("fields-pp-text") { dir =>
      val in = dev.spindle.spark.testkit.TextCorpus.writeTars(dir.resolve("in"), shards = 2, perShard = 3).toString
      val (code, out, err) = Cli.run("preprocess", "--input", in, "--output", dir.resolve("out").toString,
        "--batch-size", "2", "--fields", "text=txt,tokens=tok:list<int32>", "--master", "local[2]", "--no-ui",
        "--progress", "never")
      assert(code == 0, err)
      assert(out.trim.startsWith("preprocess: 6 samples (0 quarantined) in "), out)
      assert(out.contains(" samples/s") && !out.contains("images"), out)
      val rows = ArrowFiles.readAll(dir.resolve("out"))
      assert(rows.size == 6)
      val (schema, _) = ArrowFiles.read(ArrowFiles.partFiles(dir.resolve("out")).head)
      assert(schema.getFields.asScala.map(_.getName).toSeq == Seq("label", "key", "index", "text", "tokens"))
    }
  }

  test("feed --fields without an image: every text sample is fed, nothing decoded, no image needed") {
    TestFiles.withTempDir("fields-feed-text") { dir =>
      val in = dev.spindle.spark.testkit.TextCorpus.writeTars(dir.resolve("in"), shards = 2, perShard = 6).toString
      val report = dir.resolve("report.json")
      val (code, out, err) = Cli.run("feed", "--input", in, "--world-size", "2", "--batch-size", "2",
        "--fields", "text=txt,tokens=tok:list<int32>", "--master", "local[2]", "--no-ui", "--progress", "never",
        "--report", report.toString)
      assert(code == 0, err)
      assert(out.trim.startsWith("feed: 12 samples (0 quarantined) in "), out) // 12 = 3 batches of 2 a rank
      val json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(report.toFile)
      assert(json.findValues("images_decoded").asScala.map(_.asLong()).sum == 0, json)
    }
  }
}
