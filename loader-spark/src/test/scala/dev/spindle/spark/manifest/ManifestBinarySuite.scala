package dev.spindle.spark.manifest
import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.util.{List => JList}
import java.util.zip.{CRC32C, Deflater}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import dev.spindle.spark.shard.{FolderEntry, ParquetColumns, Shard, ShardFormat}
import dev.spindle.spark.plan.Plans
import dev.spindle.spark.plan.RandomManifests
/** The manifest's binary form: the JSON's content, compact, and refused whole when damaged. */
class ManifestBinarySuite extends AnyFunSuite {
  private val binding = new ManifestBinary.Binding(123456L, 1700000000999L)

  private def bin(m: Manifest) = ManifestBinary.toBytes(m, binding)

  private def refused(bytes: Array[Byte]): String =
    intercept[IllegalArgumentException](ManifestBinary.fromBytes(bytes)).getMessage

  /** `bytes` with its CRC-32C recomputed: damage the CRC cannot catch. */
  private def resealed(bytes: Array[Byte]): Array[Byte] = {
    val crc = new CRC32C()
    crc.update(bytes, 0, bytes.length - 4)
    val v = crc.getValue.toInt
    bytes.take(bytes.length - 4) ++ Array((v >>> 24).toByte, (v >>> 16).toByte, (v >>> 8).toByte, v.toByte)
  }

  test("random manifests read back from JSON and binary as the same manifest, with one fingerprint") {
    val rnd = new Random(22)
    for (i <- 0 until 400) {
      val m = RandomManifests.manifest(rnd)
      val fromJson = ManifestCodec.fromJson(ManifestCodec.toJson(m))
      val stored = ManifestBinary.fromBytes(bin(m))
      assert(fromJson == m, s"manifest $i via JSON")
      assert(stored.manifest == m, s"manifest $i via binary: ${ManifestCodec.toJson(m)}")
      assert(stored.fingerprint == ManifestFingerprint.of(fromJson))
      assert(stored.binding == binding)
      val out = new ByteArrayOutputStream()
      ManifestBinary.write(m, ManifestBinary.Binding.NONE, out)
      val again = ManifestBinary.read(new ByteArrayInputStream(out.toByteArray))
      assert(again.manifest == m && again.binding == ManifestBinary.Binding.NONE)
    }
  }

  test("the layout as documented: make_seeds.py's own encoder writes what this codec reads") {
    // the fuzz seeds manifest-bin/*.bin come from an independent Python encoder of the layout in
    // manifest/package-info.java; each must read as its JSON twin (manifest/*.json)
    for (name <- Seq("tar", "folder", "parquet")) {
      def seed(path: String) = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(
        getClass.getResource("/fuzz/" + path).toURI))
      val json = ManifestCodec.fromJson(new String(seed(s"manifest/$name.json"), "UTF-8"))
      val stored = ManifestBinary.fromBytes(seed(s"manifest-bin/$name.bin"))
      assert(stored.manifest == json, name)
      assert(stored.binding == ManifestBinary.Binding.NONE)
      assert(ManifestColumns.decode(seed("manifest-bin/tar.columns")) ==
        ManifestCodec.fromJson(new String(seed("manifest/tar.json"), "UTF-8")))
    }
  }

  test("a path cut inside a surrogate pair by the shared prefix joins back whole") {
    // 😀 and 😁 share their high surrogate: the second path's suffix starts with a lone low half
    val m = new Manifest("file:/d", JList.of(
      new Shard("file:/d/a😀.tar", ShardFormat.TAR, 1L, 2L, 3L, JList.of()),
      new Shard("file:/d/a😁.tar", ShardFormat.TAR, 1L, 2L, 3L, JList.of()),
      new Shard("file:/d/a😁\ud800.tar", ShardFormat.TAR, 1L, 2L, 3L, JList.of()),
      new Shard("file:/d/a😁\ud800\udc00.tar", ShardFormat.TAR, 1L, 2L, 3L, JList.of())),
      JList.of())
    assert(ManifestBinary.fromBytes(bin(m)).manifest == m)
  }

  test("a million-shard-like manifest is a small fraction of its JSON") {
    val m = Plans.manifest(Seq.fill(20000)(1000L))
    val json = ManifestCodec.toJson(m).length
    val binary = bin(m).length
    assert(binary * 20 < json, s"binary $binary bytes, JSON $json")
  }

  test("Parquet columns a job does not read (no image, no label declared) read back from JSON and binary as absent") {
    for (columns <- Seq(new ParquetColumns(null, null), new ParquetColumns(null, "l"), new ParquetColumns("i", null))) {
      val m = new Manifest("file:/p", JList.of(
        new Shard("file:/p/a.parquet", ShardFormat.PARQUET, 10L, 1L, 3L, JList.of(), columns)), JList.of())
      val stored = ManifestBinary.fromBytes(bin(m))
      assert(stored.manifest == m && stored.manifest.shards.get(0).columns == columns, columns)
      assert(ManifestCodec.fromJson(ManifestCodec.toJson(m)) == m, columns)
      assert(stored.fingerprint == ManifestFingerprint.of(m))
    }
    assert(new ParquetColumns(null, null).toString == "(neither image nor label)")
    assert(new ParquetColumns(null, "l").toString == "l" && ParquetColumns.DEFAULT.toString == "image, label")
  }

  test("manifests the JSON form cannot write are refused by the binary form with the same reason") {
    val outside = new Manifest("file:/data/in", JList.of(new Shard("file:/data/input2/a.tar",
      ShardFormat.TAR, 1L, 1L, 1L, JList.of())), JList.of())
    val e = intercept[IllegalArgumentException](bin(outside))
    assert(e.getMessage == intercept[IllegalArgumentException](ManifestCodec.toJson(outside)).getMessage)
    assert(e.getMessage.contains("shard file:/data/input2/a.tar is not below the input file:/data/in"))
    val two = new Manifest("file:/p", JList.of(
      new Shard("file:/p/a.parquet", ShardFormat.PARQUET, 1L, 1L, 1L, JList.of(), new ParquetColumns("i", "l")),
      new Shard("file:/p/b.parquet", ShardFormat.PARQUET, 1L, 1L, 1L, JList.of(), new ParquetColumns("j", "l"))),
      JList.of())
    assert(intercept[IllegalArgumentException](bin(two)).getMessage.contains("name different Parquet columns"))
  }

  test("every truncation and every changed byte is refused, naming the problem") {
    val m = new Manifest("file:/imgs", JList.of(new Shard("file:/imgs", ShardFormat.IMAGE_FOLDER, 30L, 5L, 2L,
      JList.of(new FolderEntry("cat/a.jpg", 0), new FolderEntry("dög/b.jpg", 1)))), JList.of("cat", "dög"))
    val good = bin(m)
    for (n <- 0 until good.length) {
      val msg = refused(good.take(n))
      assert(msg.startsWith("Invalid binary manifest: "), s"cut at $n: $msg")
    }
    for (i <- good.indices; flip <- Seq(0x01, 0x80, 0xff)) {
      val bad = good.clone()
      bad(i) = (bad(i) ^ flip).toByte
      val msg = refused(bad)
      assert(msg.startsWith("Invalid binary manifest: "), s"byte $i ^ $flip: $msg")
    }
    assert(refused(good.take(10)) == "Invalid binary manifest: it does not start with \"spindle-manifest-bin/2\"")
    assert(refused(good.dropRight(1)).contains("CRC-32C does not match its bytes (damaged or truncated)"))
    assert(refused(ManifestCodec.toJson(m).getBytes("UTF-8")).contains("does not start with"))
  }

  test("damage behind a valid CRC is still refused: lengths, compressed columns, fingerprint") {
    val m = Plans.manifest(Seq(10, 0, 7))
    val good = bin(m)
    val tag = "spindle-manifest-bin/2\n".length
    val fingerprintAt = tag + 16
    val lengthsAt = fingerprintAt + 44
    def changed(at: Int, f: Byte => Byte): Array[Byte] = {
      val b = good.clone()
      b(at) = f(b(at))
      resealed(b)
    }
    assert(refused(changed(fingerprintAt, b => (b ^ 1).toByte)).matches(
      "Invalid binary manifest: its shards hash to [0-9a-f]{12}… \\(3 shards, 17 samples\\), not to the [0-9a-f]{12}… \\(3 shards, 17 samples\\) it records"))
    assert(refused(changed(lengthsAt + 3, b => (b + 1).toByte)).contains("bytes from"))
    assert(refused(changed(lengthsAt + 7, b => (b + 1).toByte)).contains("lengths"))
    assert(refused(changed(lengthsAt, b => 0x80.toByte)).contains("lengths -"))
    val deflated = lengthsAt + 8
    for (i <- deflated until good.length - 4) {
      val msg = refused(changed(i, b => (b ^ 0x55).toByte))
      assert(msg.startsWith("Invalid binary manifest: "), s"compressed byte $i: $msg")
    }
  }

  test("columns that are damaged are refused, never read past or allocated from their claims") {
    val rnd = new Random(7)
    val body = ManifestColumns.encode(RandomManifests.manifest(new Random(3)))
    for (n <- 0 until body.length) {
      val e = intercept[IllegalArgumentException](ManifestColumns.decode(body.take(n)))
      assert(e.getMessage.startsWith("Invalid "), e.getMessage)
    }
    for (_ <- 0 until 3000) {
      val bad = body.clone()
      for (_ <- 0 to rnd.nextInt(3)) bad(rnd.nextInt(bad.length)) = rnd.nextInt(256).toByte
      try ManifestColumns.decode(bad)
      catch { case e: IllegalArgumentException => assert(e.getMessage != null) }
    }
    val huge = new ByteArrayOutputStream()
    huge.write(Array[Byte](1, 'x', 0, 0, 0xff.toByte, 0xff.toByte, 0xff.toByte, 0xff.toByte, 0x0f))
    assert(intercept[IllegalArgumentException](ManifestColumns.decode(huge.toByteArray)).getMessage
      .startsWith("Invalid binary manifest: the shard count 4294967295 (at most 0 here)"))
  }

  test("a compressed stream that inflates to more than it records is refused") {
    val body = ManifestColumns.encode(Plans.manifest(Seq(1, 2)))
    val deflater = new Deflater()
    deflater.setInput(body ++ new Array[Byte](1000))
    deflater.finish()
    val buf = new Array[Byte](4096)
    val n = deflater.deflate(buf)
    deflater.end()
    val good = bin(Plans.manifest(Seq(1, 2)))
    val header = good.take("spindle-manifest-bin/2\n".length + 16 + 44)
    def int(v: Int) = Array((v >>> 24).toByte, (v >>> 16).toByte, (v >>> 8).toByte, v.toByte)
    val forged = resealed(header ++ int(body.length) ++ int(n) ++ buf.take(n) ++ new Array[Byte](4))
    assert(refused(forged).contains(s"inflate to more than ${body.length + 1} bytes"))
  }
}
