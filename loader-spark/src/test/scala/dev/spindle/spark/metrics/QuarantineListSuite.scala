package dev.spindle.spark.metrics

import java.nio.file.Files
import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

class QuarantineListSuite extends AnyFunSuite {

  private def rec(shard: String, key: String, index: Long) = new QuarantineRecord(shard, key, index, s"bad $key")

  test("records are listed in dataset order whatever order the tasks' threads added them in") {
    val arrivals = Seq(rec("b.tar", "(rest of shard)", -1), rec("a.tar", "k7", 7),
      rec("a.tar", "(rest of shard)", -1), rec("a.tar", "k2", 2), rec("b.tar", "k11", 11))
    val expected = Seq("k2", "k7", "k11", "(rest of shard)", "(rest of shard)")
    for (order <- arrivals.permutations) {
      val list = new QuarantineList()
      order.foreach(list.add)
      assert(list.first().asScala.map(_.key) == expected)
      assert(list.first().asScala.filter(_.index < 0).map(_.shard) == Seq("a.tar", "b.tar"))
    }
  }

  test("the JSON lines file lists every record in the same order as the report") {
    TestFiles.withTempDir("quarantine-order") { dir =>
      val list = new QuarantineList()
      (0 until 150).reverse.foreach(i => list.add(rec("s.tar", s"k$i", i)))
      val report = list.putInto(new JobReport("test"))
      report.write(dir.resolve("r.json"))
      val lines = Files.readAllLines(dir.resolve("r.quarantine.jsonl")).asScala
      assert(lines.size == 150)
      assert(lines.head.contains("\"key\":\"k0\"") && lines.last.contains("\"key\":\"k149\""))
      val listed = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]]
      assert(listed.asScala.map(_.get("index")) == (0L until 100L))
    }
  }
}
