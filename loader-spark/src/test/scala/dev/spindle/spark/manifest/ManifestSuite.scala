package dev.spindle.spark.manifest
import java.util.{List => JList}

import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.shard.Shard
import dev.spindle.spark.shard.ShardFormat

class ManifestSuite extends AnyFunSuite {
  private def tar(name: String, samples: Long) =
    new Shard(name, ShardFormat.TAR, 100L, 0L, samples, JList.of())

  test("offsets number samples across shards in canonical order") {
    val m = new Manifest("file:/d", JList.of(tar("a.tar", 3), tar("b.tar", 0), tar("c.tar", 5)), JList.of())
    assert(m.offsets().toSeq == Seq(0L, 3L, 3L, 8L))
    assert(m.totalSamples() == 8L)
    assert(m.totalBytes() == 300L)
  }

  test("a negative sample count is refused with the shard's name") {
    val e = intercept[IllegalArgumentException](tar("bad.tar", -1))
    assert(e.getMessage.contains("bad.tar"))
  }
}
