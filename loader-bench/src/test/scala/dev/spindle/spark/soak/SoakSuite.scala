package dev.spindle.spark.soak

import scala.jdk.CollectionConverters._

import dev.spindle.spark.train.TrainRuns
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * The short soak (`bench soak --epochs 3`): `feed --serve` on host feeders with two real Python
 * trainers, then the end state once the session stopped: no Arrow bytes, no `/dev/shm` files held,
 * no socket files, no stray threads (a stopped local session used to keep its bridges, feeders,
 * slabs and their threads until the JVM exited).
 */
class SoakSuite extends AnyFunSuite {
  private def session(): SparkSession = SparkSession.builder().master("local[4]")
    .appName("SoakSuite").config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false")
    .getOrCreate()

  test("growth per epoch is the least-squares slope of the epoch ends, so one noisy sample moves it less") {
    def slope(v: Long*): Double = SoakSeries.slope(v.map(Long.box).asJava)
    assert(slope(10, 10) == 0.0 && slope(10, 14) == 4.0 && slope(1, 2, 3, 4) == 1.0)
    assert(slope(100, 100, 100, 100, 100, 100, 100, 100, 100, 190) < 90.0 / 9) // a last spike
    assert(slope(7) == 0.0)
  }

  test("three served epochs leave nothing behind once the session stops") {
    assume(TrainRuns.torchAvailable, s"${TrainRuns.Python} cannot import torch")
    val r = SoakBench.run(new SoakBench.Options(3, 2.0, 4, 32, TrainRuns.Python), () => session())
      .asScala
    assert(r("epochs") == 3)
    val end = r("end_state").asInstanceOf[java.util.Map[String, AnyRef]].asScala
    assert(end("arrow_bytes") == 0L, end)
    assert(end("shm_files") == 0 && end("socket_files") == 0, end)
    assert(end("threads") == 0, s"stray threads: ${end("stray_threads")}")
    val series = r("series").asInstanceOf[java.util.Map[String, java.util.Map[String, AnyRef]]].asScala
    assert(series.keySet == Sampler.NAMES.asScala.toSet)
    for ((name, s) <- series) {
      assert(Set("first_epoch_end", "last", "growth_per_epoch", "samples").subsetOf(s.keySet.asScala), name)
      assert(s.get("samples").asInstanceOf[java.util.List[_]].size >= 4, name) // start + 3 epoch ends
      assert(s.get("epoch_ends").asInstanceOf[java.util.List[_]].size == 3, name)
    }
    assert(series("shm_files").get("growth_per_epoch") == 0.0, "a slab per epoch")
    assert(series("trainer_rss_bytes").get("first_epoch_end").asInstanceOf[Long] > 0, "trainers sampled")
    assert(SoakBench.summary(r.asJava).contains("end state: arrow_bytes 0, shm_files 0, socket_files 0, threads 0"))
  }
}
