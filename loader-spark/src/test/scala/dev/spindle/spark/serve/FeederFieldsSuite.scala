package dev.spindle.spark.serve

import java.time.Duration

import dev.spindle.gpu.device.{NormalizeSpec, SharedMemoryDevice}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder, SlotField}
import dev.spindle.spark.batch.BatchSchema
import dev.spindle.spark.samples.{BatchImages, SampleSettings}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** What a feed's feeder learns of its batches' extra fields, and how its batches then reach it. */
class FeederFieldsSuite extends AnyFunSuite {
  private def column(name: String, t: ArrowType, children: Field*) =
    new Field(name, FieldType.notNullable(t), children.asJava)

  test("an image + label feed's feeder has no extra fields: today's slots") {
    val images = new BatchImages(null, 8, 6, 3, "stored")
    assert(FeederFields.of(SampleSettings.from(Map.empty[String, String].asJava, images)).isEmpty)
    assert(FeederFields.of(SampleSettings.from(
      Map("spark.spindle.fields" -> "image=jpg,label=cls").asJava, images)).isEmpty)
    assert(FeederFields.of(BatchSchema.of(8, 6, 3), 100).isEmpty)
  }

  test("a feed's declared extra fields are its feeder's, bounded by spark.spindle.fields.maxBytes") {
    val images = new BatchImages(null, 8, 6, 3, "stored")
    val got = FeederFields.of(SampleSettings.from(Map(
      "spark.spindle.fields" -> "image=jpg,caption=txt,tokens=json:list<int32>,score=score:float32",
      "spark.spindle.fields.maxBytes" -> "4096").asJava, images))
    assert(got.asScala == Seq(
      new SlotField("caption", SlotField.Dtype.UINT8, SlotField.Kind.STRING, 4096),
      new SlotField("tokens", SlotField.Dtype.INT32, SlotField.Kind.LIST, 4096),
      SlotField.fixed("score", SlotField.Dtype.FLOAT32)))
  }

  test("the batch schema's columns after index become the feeder's fields, in order") {
    val core = BatchSchema.of(8, 6, 3).getFields.asScala.toSeq
    val extra = Seq(column("caption", ArrowType.Utf8.INSTANCE),
      column("tokens", ArrowType.List.INSTANCE, column("item", new ArrowType.Int(32, true))),
      column("id", new ArrowType.Int(64, true)), column("raw", ArrowType.Binary.INSTANCE))
    val got = FeederFields.of(new Schema((core ++ extra).asJava), 65536)
    val max = 65536
    assert(got.asScala == Seq(
      new SlotField("caption", SlotField.Dtype.UINT8, SlotField.Kind.STRING, max),
      new SlotField("tokens", SlotField.Dtype.INT32, SlotField.Kind.LIST, max),
      SlotField.fixed("id", SlotField.Dtype.INT64),
      new SlotField("raw", SlotField.Dtype.UINT8, SlotField.Kind.LIST, max)))
  }

  test("a feeder with extra fields is given Arrow batches, not slots to decode into") {
    def consumerOf(fields: Seq[SlotField]) = {
      val feeder = GpuFeeder.open(new SharedMemoryDevice(),
        FeederConfig.of(2, NormalizeSpec.raw(4, 1, 1)).withSlots(2).withFields(fields.asJava))
      (feeder, FeederConsumer.serving(null, 0, feeder, Duration.ofSeconds(5)))
    }
    val (plain, toPlain) = consumerOf(Seq.empty)
    val (typed, toTyped) = consumerOf(Seq(SlotField.fixed("id", SlotField.Dtype.INT64)))
    try {
      val slot = toPlain.claimSlot(0)
      assert(slot != null, "an image + label feeder takes batches decoded into its slots")
      slot.close()
      assert(toTyped.claimSlot(0) == null)
    } finally {
      plain.close()
      typed.close()
    }
  }
}
