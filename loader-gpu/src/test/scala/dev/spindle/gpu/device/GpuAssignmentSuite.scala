package dev.spindle.gpu.device

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** Spark GPU addresses → CUDA ordinals. */
class GpuAssignmentSuite extends AnyFunSuite {
  def ordinals(addresses: Seq[String], visible: String = null): Seq[Int] =
    GpuAssignment.ordinals(addresses.asJava, visible).asScala.map(_.intValue).toSeq

  test("addresses are physical ordinals when CUDA_VISIBLE_DEVICES is unset") {
    assert(ordinals(Seq("1", "0", "1")) == Seq(1, 0))
    assert(ordinals(Seq(" 3 "), "  ") == Seq(3))
    assert(ordinals(Seq()) == Seq())
  }

  test("CUDA_VISIBLE_DEVICES renumbers the visible devices from zero") {
    assert(ordinals(Seq("6", "4"), "4,6") == Seq(1, 0))
    val e = intercept[IllegalArgumentException](ordinals(Seq("2"), "4,6"))
    assert(e.getMessage == "Invalid GPU address: '2' (not in CUDA_VISIBLE_DEVICES=4,6)")
  }

  test("malformed addresses are named in the error") {
    for (bad <- Seq("gpu0", "-1", "", null)) {
      val e = intercept[IllegalArgumentException](ordinals(Seq(bad)))
      assert(e.getMessage.startsWith(s"Invalid GPU address: '$bad'"))
    }
  }

  test("a task picks one ordinal, spreading partitions over several GPUs, or the host") {
    assert(GpuAssignment.ordinalForTask(Seq("2", "3").asJava, null, 5) == 3)
    assert(GpuAssignment.ordinalForTask(Seq("2", "3").asJava, null, 4) == 2)
    assert(GpuAssignment.ordinalForTask(Seq.empty[String].asJava, null, 4) == -1)
    intercept[IllegalArgumentException](GpuAssignment.ordinalForTask(Seq("0").asJava, null, -1))
  }
}
