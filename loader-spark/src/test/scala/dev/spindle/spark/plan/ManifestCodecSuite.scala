package dev.spindle.spark.plan

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.util.{List => JList}

import org.scalatest.funsuite.AnyFunSuite

import dev.spindle.spark.shard.{FolderEntry, Manifest, Shard, ShardFormat}

class ManifestCodecSuite extends AnyFunSuite {
  private val folder = new Manifest("file:/data/imgs",
    JList.of(
      new Shard("file:/data/imgs", ShardFormat.IMAGE_FOLDER, 3000L, 1700000000123L, 2L,
        JList.of(new FolderEntry("cat/a.jpg", 0), new FolderEntry("cat/b.jpg", 0))),
      new Shard("file:/data/imgs", ShardFormat.IMAGE_FOLDER, 1200L, 1700000000999L, 1L,
        JList.of(new FolderEntry("dog/ü ñ.jpg", 1)))),
    JList.of("cat", "dog"))

  test("a manifest survives its JSON form unchanged") {
    val tars = Plans.manifest(Seq(10, 0, 7))
    assert(ManifestCodec.fromJson(ManifestCodec.toJson(tars)) == tars)
    assert(ManifestCodec.fromJson(ManifestCodec.toJson(folder)) == folder)
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
    for (field <- Seq("\"format\":\"spindle-manifest/2\"", "\"input\"", "\"classNames\"", "\"shards\"",
      "\"uri\"", "\"bytes\"", "\"modificationTime\"", "\"samples\"", "\"entries\"", "\"path\"", "\"label\"",
      "\"IMAGE_FOLDER\"")) {
      assert(json.contains(field), field)
    }
  }

  test("malformed manifests are refused with the reason") {
    def refused(json: String) = intercept[IllegalArgumentException](ManifestCodec.fromJson(json)).getMessage
    assert(refused("""{"format":"spindle-manifest/0","input":"x","classNames":[],"shards":[]}""")
      .contains("format \"spindle-manifest/0\""))
    assert(refused("""{"format":"spindle-manifest/2","classNames":[],"shards":[]}""").startsWith("Invalid manifest"))
    assert(refused("""{"format":"spindle-manifest/2","input":"x","classNames":[],"shards":[{"uri":"a.tar","format":"ZIP","bytes":1,"modificationTime":1,"samples":1,"entries":[]}]}""")
      .contains("ZIP"))
    assert(refused("""{"format":"spindle-manifest/2","input":"x","classNames":[],"shards":[{"uri":"a.tar","format":"TAR","bytes":1,"modificationTime":1,"samples":-4,"entries":[]}]}""")
      .contains("a.tar"))
    assert(refused("{").startsWith("Invalid manifest"))
  }

  test("a manifest of format 1 is refused as outdated, so a cache of it is counted again") {
    val v1 = ManifestCodec.toJson(folder).replace("spindle-manifest/2", "spindle-manifest/1")
    val e = intercept[ManifestCodec.OutdatedException](ManifestCodec.fromJson(v1))
    assert(e.getMessage.contains("\"spindle-manifest/1\" counted tar shards with an earlier parser"))
  }
}
