package dev.spindle.spark.manifest
import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.util.{List => JList}

import org.scalatest.funsuite.AnyFunSuite

import dev.spindle.spark.shard.{FolderEntry, ParquetColumns, Shard, ShardFormat}
import dev.spindle.spark.plan.Plans
class ManifestCodecSuite extends AnyFunSuite {
  private val folder = new Manifest("file:/data/imgs",
    JList.of(
      new Shard("file:/data/imgs", ShardFormat.IMAGE_FOLDER, 3000L, 1700000000123L, 2L,
        JList.of(new FolderEntry("cat/a.jpg", 0), new FolderEntry("cat/b.jpg", 0))),
      new Shard("file:/data/imgs", ShardFormat.IMAGE_FOLDER, 1200L, 1700000000999L, 1L,
        JList.of(new FolderEntry("dog/ü ñ.jpg", 1)))),
    JList.of("cat", "dog"))

  private val columns = new ParquetColumns("img", "cls")
  private val parquet = new Manifest("hdfs://nn/data/train-{00..01}.parquet",
    JList.of(
      new Shard("hdfs://nn/data/train-00.parquet", ShardFormat.PARQUET, 900L, 17L, 40L, JList.of(), columns),
      new Shard("hdfs://nn/data/train-01.parquet", ShardFormat.PARQUET, 800L, 18L, 35L, JList.of(), columns)),
    JList.of())

  test("a manifest survives its JSON form unchanged") {
    val tars = Plans.manifest(Seq(10, 0, 7))
    assert(ManifestCodec.fromJson(ManifestCodec.toJson(tars)) == tars)
    assert(ManifestCodec.fromJson(ManifestCodec.toJson(folder)) == folder)
    assert(ManifestCodec.fromJson(ManifestCodec.toJson(parquet)) == parquet)
  }

  test("shard paths are written relative to the input (a brace pattern's folder), columns once") {
    val json = ManifestCodec.toJson(parquet)
    assert(json.contains("\"path\":\"train-00.parquet\""), json)
    assert(!json.contains("hdfs://nn/data/train-00"), json)
    assert(json.contains("\"parquetColumns\":{\"image\":\"img\",\"label\":\"cls\"}"), json)
    val tars = Plans.manifest(Seq(1, 2))
    assert(ManifestCodec.toJson(tars).contains("\"path\":\"shard-00001.tar\""))
    assert(ManifestCodec.toJson(folder).contains("\"path\":\"\",\"format\":\"IMAGE_FOLDER\""))
    val outside = new Manifest("file:/data/in", JList.of(new Shard("file:/data/input2/a.tar",
      ShardFormat.TAR, 1L, 1L, 1L, JList.of())), JList.of())
    val e = intercept[IllegalArgumentException](ManifestCodec.toJson(outside))
    assert(e.getMessage.contains("shard file:/data/input2/a.tar is not below the input file:/data/in"))
  }

  test("read under another input, a manifest's shards move with it") {
    val tars = Plans.manifest(Seq(1, 2))
    val moved = ManifestCodec.fromJson(ManifestCodec.toJson(tars)).rebased("file:/copy")
    assert(moved.input == "file:/copy")
    assert(moved.shards.get(1).uri == "file:/copy/shard-00001.tar")
    assert(moved.rebased(tars.input) == tars)
    val p = parquet.rebased("file:/local/t-{00..01}.parquet")
    assert(p.shards.get(0).uri == "file:/local/train-00.parquet")
  }

  test("streams round-trip and are left open for their owner") {
    val out = new ByteArrayOutputStream() {
      var closed = false
      override def close(): Unit = closed = true
    }
    ManifestCodec.write(folder, out)
    assert(!out.closed)
    val in = new ByteArrayInputStream(out.toByteArray) {
      var closed = false
      override def close(): Unit = closed = true
    }
    assert(ManifestCodec.read(in) == folder)
    assert(!in.closed)
  }

  test("the JSON document carries its format tag and the documented field names") {
    val json = ManifestCodec.toJson(folder)
    for (field <- Seq("\"format\":\"spindle-manifest/4\"", "\"input\"", "\"classNames\"", "\"shards\"",
      "\"parquetColumns\"", "\"bytes\"", "\"modificationTime\"", "\"samples\"", "\"entries\"", "\"path\"", "\"label\"",
      "\"IMAGE_FOLDER\"")) {
      assert(json.contains(field), field)
    }
  }

  test("the JSON records the fingerprint of what it holds; an edited one is refused, one without is read") {
    val tars = Plans.manifest(Seq(10, 0, 7))
    val json = ManifestCodec.toJson(tars)
    val sha = ManifestFingerprint.of(tars).sha256
    assert(json.contains(s""""input":"${tars.input}","fingerprint":"$sha","classNames""""), json)
    val doc = ManifestCodec.readDocument(new ByteArrayInputStream(json.getBytes("UTF-8")))
    assert(doc.manifest == tars && doc.fingerprint == sha)
    val lowered = json.replace("\"samples\":7", "\"samples\":5")
    val e = intercept[ManifestCodec.EditedException](ManifestCodec.fromJson(lowered))
    val found = ManifestFingerprint.of(ManifestCodec.fromJson(lowered.replace(s""""fingerprint":"$sha",""", "")))
    assert(e.getMessage == "Invalid manifest: its shards hash to " + found.describe() +
      ", not to the fingerprint " + sha.substring(0, 12) + "… it records: it was edited after it was written")
    assert(found.samples == 15L)
    val unprinted = json.replace(s""""fingerprint":"$sha",""", "")
    val old = ManifestCodec.readDocument(new ByteArrayInputStream(unprinted.getBytes("UTF-8")))
    assert(old.manifest == tars && old.fingerprint == null)
    assert(ManifestCodec.fromJson(unprinted.replace("\"samples\":7", "\"samples\":5")).totalSamples == 15L,
      "without a fingerprint there is nothing to check it by")
  }

  test("malformed manifests are refused with the reason") {
    def refused(json: String) = intercept[IllegalArgumentException](ManifestCodec.fromJson(json)).getMessage
    assert(refused("""{"format":"spindle-manifest/0","input":"x","classNames":[],"shards":[]}""")
      .contains("format \"spindle-manifest/0\""))
    assert(refused("""{"format":"spindle-manifest/4","classNames":[],"shards":[]}""").startsWith("Invalid manifest"))
    assert(refused("""{"format":"spindle-manifest/4","input":"x","classNames":[],"parquetColumns":null,"shards":[{"path":"a.tar","format":"ZIP","bytes":1,"modificationTime":1,"samples":1,"entries":[]}]}""")
      .contains("ZIP"))
    assert(refused("""{"format":"spindle-manifest/4","input":"x","classNames":[],"parquetColumns":null,"shards":[{"path":"a.tar","format":"TAR","bytes":1,"modificationTime":1,"samples":-4,"entries":[]}]}""")
      .contains("a.tar"))
    assert(refused("""{"format":"spindle-manifest/4","input":"x","classNames":[],"parquetColumns":null,"shards":[{"path":"a.parquet","format":"PARQUET","bytes":1,"modificationTime":1,"samples":4,"entries":[]}]}""")
      .contains("Parquet shard a.parquet but no \"parquetColumns\""))
    assert(refused("{").startsWith("Invalid manifest"))
  }

  test("an empty or format-less document is refused as invalid, not a NullPointerException") {
    // found by fuzzing (manifest): a missing format reached Map.of's containsKey(null)
    for (doc <- Seq("", "[]", "{}", """{"format":null}""", """{"format":3}""")) {
      val e = intercept[IllegalArgumentException](ManifestCodec.fromJson(doc))
      assert(e.getMessage == "Invalid manifest: format \"null\" (expected \"spindle-manifest/4\")",
        doc)
      intercept[IllegalArgumentException](ManifestCodec.read(new ByteArrayInputStream(doc.getBytes)))
    }
  }

  test("bytes that look like UTF-32 but are not text are refused as invalid, not an IOException") {
    // found by fuzzing (manifest): Jackson's CharConversionException escaped read() as if the
    // stream had failed
    val bytes = new Array[Byte](53) ++ """{"sjards": []}""".getBytes("UTF-8")
    val e = intercept[IllegalArgumentException](ManifestCodec.read(new ByteArrayInputStream(bytes)))
    assert(e.getMessage.startsWith("Invalid manifest: not JSON text: Invalid UTF-32 character"))
  }

  test("manifests of formats 1 and 2 are refused as outdated, so a cache of them is counted again") {
    val v1 = ManifestCodec.toJson(folder).replace("spindle-manifest/4", "spindle-manifest/1")
    val e = intercept[ManifestCodec.OutdatedException](ManifestCodec.fromJson(v1))
    assert(e.getMessage.contains("\"spindle-manifest/1\" counted tar shards with an earlier parser"))
    val v2 = ManifestCodec.toJson(folder).replace("spindle-manifest/4", "spindle-manifest/2")
    val e2 = intercept[ManifestCodec.OutdatedException](ManifestCodec.fromJson(v2))
    assert(e2.getMessage.contains("\"spindle-manifest/2\" recorded absolute shard URIs"))
    val written2 = """{"format":"spindle-manifest/2","input":"file:/d","classNames":[],"shards":[{"uri":"file:/d/a.tar","format":"TAR","bytes":1,"modificationTime":1,"samples":1,"entries":[]}]}"""
    intercept[ManifestCodec.OutdatedException](ManifestCodec.fromJson(written2))
  }

  test("a manifest of format 3 is refused as outdated: its tar counts and folder listings predate today's rules") {
    val v3 = ManifestCodec.toJson(folder).replace("spindle-manifest/4", "spindle-manifest/3")
    val e = intercept[ManifestCodec.OutdatedException](ManifestCodec.fromJson(v3))
    assert(e.getMessage.contains("\"spindle-manifest/3\" counted tar shards before macOS and" +
      " WebDataset metadata members were passed over and concatenated tars read whole"), e.getMessage)
  }
}
