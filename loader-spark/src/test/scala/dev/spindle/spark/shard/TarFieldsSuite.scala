package dev.spindle.spark.shard

import java.io.ByteArrayInputStream

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.{BatchSchema, FieldSet}
import dev.spindle.spark.testkit.TestFiles
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * Declared fields of WebDataset tar samples (`spark.spindle.fields`): each extra member is read and
 * typed, a sample whose field is missing, does not parse or is too large is quarantined with a
 * reason naming the field and the key, and the member-indexed reader yields the same fields.
 */
class TarFieldsSuite extends AnyFunSuite {
  private def limits(fields: String, maxBytes: Int = 65536) =
    new SampleLimits(1 << 20, 0, FieldSet.parse(fields), maxBytes)

  private def read(bytes: Array[Byte], l: SampleLimits): Seq[Sample] =
    TarShardReader.of(new ByteArrayInputStream(bytes), "mem.tar", l, null).asScala.toSeq

  private def img(i: Int) = Array[Byte](1, i.toByte)

  test("every declared member becomes a typed value, in declaration order") {
    val bytes = TestFiles.tarBytes(Seq(
      "k1.jpg" -> img(1), "k1.cls" -> ascii("7"), "k1.txt" -> "a red cat ✓".getBytes("UTF-8"),
      "k1.json" -> ascii("""{"boxes": [[1, 2, 3, 4]]}"""), "k1.tok" -> ascii("[3, 1, 4, 1, 5]"),
      "k1.score" -> ascii(" 0.25\n"), "k1.id" -> ascii("9000000000"), "k1.bin" -> Array[Byte](0, -1, 2)))
    val l = limits("image=jpg,caption=txt,label=cls,meta=json,tokens=tok:list<int32>," +
      "score=score:float32,id=id,raw=bin,again=txt:bytes")
    val s = read(bytes, l).head
    assert(s.usable, String.valueOf(s.problem))
    assert(s.label == 7 && s.image.toSeq == img(1).toSeq)
    val f = s.fields.asScala.toSeq
    assert(f.size == 7)
    assert(f(0) == "a red cat ✓")
    assert(f(1) == """{"boxes": [[1, 2, 3, 4]]}""")
    assert(f(2).asInstanceOf[Array[Int]].toSeq == Seq(3, 1, 4, 1, 5))
    assert(f(3) == 0.25f)
    assert(f(4) == 9000000000L)
    assert(f(5).asInstanceOf[Array[Byte]].toSeq == Seq[Byte](0, -1, 2))
    assert(f(6).asInstanceOf[Array[Byte]].toSeq == "a red cat ✓".getBytes("UTF-8").toSeq)
    // what the queues' byte bounds count for them: strings as UTF-16, arrays by element, numbers 8
    assert(s.fieldBytes == 2 * "a red cat ✓".length + 2 * f(1).asInstanceOf[String].length + 5 * 4 + 8 + 8 + 3 +
      "a red cat ✓".getBytes("UTF-8").length)
    assert(read(TestFiles.tarBytes(Seq("k.jpg" -> img(0), "k.cls" -> ascii("1"))), new SampleLimits(1 << 20, 0))
      .head.fieldBytes == 0)
  }

  test("without a label field every sample is labelled -100 and needs no .cls; without fields nothing changes") {
    val bytes = TestFiles.tarBytes(Seq("k1.png" -> img(1), "k1.txt" -> ascii("x"), "k2.png" -> img(2), "k2.txt" -> ascii("y")))
    val s = read(bytes, limits("image=png,caption=txt"))
    assert(s.forall(_.usable), s.map(_.problem))
    assert(s.map(_.label.intValue) == Seq(BatchSchema.IGNORED_LABEL, BatchSchema.IGNORED_LABEL))
    assert(s.map(_.fields.get(0)) == Seq("x", "y"))
    val plain = read(bytes, new SampleLimits(1 << 20, 0))
    assert(plain.forall(p => p.problem.startsWith("no label entry") && p.fields.isEmpty))
  }

  test("the image field takes only its own extension") {
    val bytes = TestFiles.tarBytes(Seq("k1.png" -> img(1), "k1.jpg" -> img(2), "k1.cls" -> ascii("0")))
    assert(read(bytes, limits("image=jpg,label=cls")).head.image.toSeq == img(2).toSeq)
    assert(read(bytes, limits("image=png,label=cls")).head.image.toSeq == img(1).toSeq)
    val other = read(bytes, limits("image=webp,label=cls")).head
    assert(other.problem.startsWith("no '.webp' member for field 'image' of key 'k1'"), other.problem)
  }

  test("bad fields are quarantined with a reason naming field, member and key, never dropped") {
    def one(member: (String, Array[Byte]), fields: String, maxBytes: Int = 65536): String = {
      val bytes = TestFiles.tarBytes(Seq("k.jpg" -> img(0), "k.cls" -> ascii("1"), member))
      val s = read(bytes, limits("image=jpg,label=cls," + fields, maxBytes))
      assert(s.size == 1 && !s.head.usable && s.head.fields.isEmpty)
      s.head.problem
    }
    assert(one("k.other" -> ascii("x"), "caption=txt") ==
      "no '.txt' member for field 'caption' of key 'k'; its entries: k.jpg, k.cls, k.other" +
        " (the key is the file name up to its first dot)")
    assert(one("k.json" -> ascii("{\"a\": 1"), "meta=json").matches(
      "field 'meta' \\(string\\) in k\\.json: not valid JSON: .* \\(key 'k'\\)"))
    assert(one("k.json" -> ascii("{} {}"), "meta=json").contains("not valid JSON"))
    assert(one("k.n" -> ascii("12x"), "n=n:int32") ==
      "field 'n' (int32) in k.n: '12x' is not an integer (key 'k')")
    assert(one("k.n" -> ascii("3000000000"), "n=n:int32") ==
      "field 'n' (int32) in k.n: '3000000000' is outside [-2147483648, 2147483647] (key 'k')")
    assert(one("k.f" -> ascii("0x1p3"), "f=f:float64").contains("'0x1p3' is not a number"))
    assert(one("k.t" -> ascii("[1, 2.5]"), "t=t:list<int32>") ==
      "field 't' (list<int32>) in k.t: element 1 ('2.5') is not an int32 (key 'k')")
    assert(one("k.t" -> ascii("{\"a\": 1}"), "t=t:list<int32>").contains("not a JSON array but object"))
    assert(one("k.txt" -> Array[Byte](-1, -2), "c=txt") ==
      "field 'c' (string) in k.txt: not valid UTF-8 text (key 'k')")
    assert(one("k.txt" -> ascii("x" * 11), "c=txt", maxBytes = 10) ==
      "field 'c': member k.txt is 11 bytes, over spark.spindle.fields.maxBytes=10")
    assert(one("k.t" -> ascii("[1, 2, 3]"), "t=t:list<int32>", maxBytes = 8) ==
      "field 't' (list<int32>) in k.t: 3 elements (12 bytes), over spark.spindle.fields.maxBytes=8 (key 'k')")
    assert(one("k.n" -> ascii("1" * 5000), "n=n:int64") ==
      "field 'n': member k.n is 5000 bytes, over the limit of 4096 bytes for a number")
  }

  test("the member-indexed reader yields every member the fields need, as the sequential one") {
    TestFiles.withTempDir("tar-fields-index") { dir =>
      val conf = new Configuration()
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      TestFiles.writeTar(dir.resolve("a.tar"), (0 until 8).flatMap(i => Seq(
        s"k$i.png" -> Array.fill(300 + i)(i.toByte), s"k$i.cls" -> ascii(i.toString),
        s"k$i.txt" -> ascii(s"caption $i"), s"k$i.tok" -> ascii(s"[$i, ${i * 2}]"))))
      val c = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where).count(base + "/a.tar", conf)
      val shard = new Shard(c.uri, ShardFormat.TAR, c.bytes, c.modificationTime, c.samples, java.util.List.of())
      val l = limits("image=png,label=cls,caption=txt,tokens=tok:list<int64>")
      def all(r: ShardReader) =
        try { val b = ArrayBuffer[Sample](); while (r.hasNext) b += r.next(); b.toSeq } finally r.close()
      def values(s: Sample) = (s.key, s.label, s.fields.get(0), s.fields.get(1).asInstanceOf[Array[Long]].toSeq)
      val positions = Array(1, 4, 6)
      TarIndexFiles.forgetCached()
      val counters = new IoCounters()
      val indexed = all(ShardReader.open(shard, conf, l, positions, new IoSettings(true, 0, 4, where), counters))
      assert(counters.counts().shardOpensIndexed == 1L)
      assert(indexed.map(values) == all(TarShardReader.open(shard, conf, l, positions)).map(values))
      assert(indexed.map(values) == positions.toSeq.map(i => (s"k$i", i, s"caption $i", Seq(i.toLong, i * 2L))))
    }
  }
}
