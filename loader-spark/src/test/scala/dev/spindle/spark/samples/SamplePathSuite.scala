package dev.spindle.spark.samples

import scala.jdk.CollectionConverters._

import dev.spindle.spark.image.{ImageTestSupport, ImageTransform}
import dev.spindle.spark.pipeline.ExecutorPools
import dev.spindle.spark.shard.Sample
import org.apache.arrow.memory.{ArrowBuf, RootAllocator}
import org.scalatest.funsuite.AnyFunSuite

/**
 * What the sample path hands its consumer for rows decoded straight into their batch: the rows'
 * items without their encoded bytes, which the batch no longer needs (the feed's and `bench
 * images`' path; each row is delivered only with its whole batch).
 */
class SamplePathSuite extends AnyFunSuite {

  /** Row `row` of `into`, as the feed's rows and `bench images`' items are. */
  private case class Item(index: Long, sample: Sample, into: RowBatch, row: Int)
      extends IndexedSample {
    override def id(): String = sample.key
    override def bytes(): Long = if (sample.image == null) 0 else sample.image.length
    override def target(): RowTarget = into.row(row)
    override def withoutImage(): Item = copy(sample = sample.withoutImage())
  }

  private final class Batch(buf: ArrowBuf, rowBytes: Long, rows: Int)
      extends RowBatch(buf, rowBytes, rows) {
    override protected def release(): Unit = buf.close()
  }

  private def jpeg(seed: Int): Array[Byte] =
    ImageTestSupport.encode("jpg", 40, 30)((x, y) => (x * seed) << 16 | (y * 7) << 8 | (x ^ y))

  test("a row decoded into its batch reaches the consumer without its encoded bytes") {
    val t = ImageTransform.parse("resize(16),center_crop(16)")
    val allocator = new RootAllocator(1L << 26)
    val pools = ExecutorPools.create("sample-path-suite", 2)
    try {
      val batch = new Batch(allocator.buffer(4 * t.outputBytes()), t.outputBytes(), 4)
      val images = Seq(jpeg(3), jpeg(5), "not a JPEG".getBytes("US-ASCII"), jpeg(9))
      val items = images.zipWithIndex.map { case (bytes, i) =>
        Item(i, new Sample("shard-0", s"k$i", i, bytes, s"k$i.jpg", Int.box(i * 10), null),
          batch, i)
      }
      val path = SamplePath.startOn(pools,
        PathSpec.keeping("sample-path-suite", BatchImages.decoding(t), 4, 2),
        items.iterator.asJava, allocator)
      try {
        val rows = path.next().asScala
        try {
          assert(rows.map(_.item().sample.key) == Seq("k0", "k1", "k2", "k3"))
          for (r <- Seq(0, 1, 3)) {
            val d = rows(r)
            assert(d.problem() == null && d.placed(), s"row $r: ${d.problem()}")
            assert(d.item().sample.image() == null, s"row $r still holds its encoded bytes")
            assert(d.item().sample.label() == r * 10, "the rest of the sample is kept")
            assert(d.item().sample.imageName() == s"k$r.jpg")
            assert(d.item().index == r && (d.item().into eq batch) && d.item().row == r)
          }
          val bad = rows(2)
          assert(bad.problem() != null && !bad.placed())
          assert(bad.item() eq items(2), "a bad row is handed on as it came")
          assert(path.next() == null)
        } finally rows.foreach(_.close())
      } finally path.close()
      batch.giveUp()
    } finally {
      pools.close()
      allocator.close() // fails if a buffer leaked
    }
  }

  test("an item whose withoutImage() is of another class fails, naming both") {
    val other = new IndexedSample {
      override def sample(): Sample = new Sample("s", "k", 0, Array[Byte](1), "k.jpg", null, null)
      override def index(): Long = 0
      override def id(): String = "k"
      override def bytes(): Long = 1
      override def withoutImage(): IndexedSample =
        new ShardSamples.Located(sample().withoutImage(), 0)
    }
    val e = intercept[IllegalStateException](Decoded.placed(other))
    val located = classOf[ShardSamples.Located].getName
    assert(e.getMessage.contains(".withoutImage() returned a " + located), e.getMessage)
  }
}
