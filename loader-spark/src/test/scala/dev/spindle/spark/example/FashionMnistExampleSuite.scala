package dev.spindle.spark.example

import java.io.ByteArrayInputStream
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import javax.imageio.ImageIO

import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/**
 * Fashion-MNIST from Debian's dataset-fashion-mnist: the import job, and the example that trains
 * two DDP ranks (Python, gloo, CPU) with `train`. Cancelled, visibly, where the package is not
 * installed (bin/setup-test-deps installs it). TrainClusterSuite runs it on local-cluster.
 */
class FashionMnistExampleSuite extends AnyFunSuite with SparkFixture {
  override protected def master: String = "local[4]" // both ranks' feed tasks run at once

  private def requireData(): Unit =
    assume(Files.isReadable(FashionMnistImport.DEBIAN_DIR.resolve("train-images-idx3-ubyte.gz")),
      s"Debian's dataset-fashion-mnist is not installed (${FashionMnistImport.DEBIAN_DIR})")

  /** (name, bytes) of every entry of a tar file. */
  private def tarEntries(file: Path): Seq[(String, Array[Byte])] = {
    val b = Files.readAllBytes(file)
    val out = Seq.newBuilder[(String, Array[Byte])]
    var at = 0
    while (at + 512 <= b.length && b(at) != 0) {
      val name = new String(b, at, 100, StandardCharsets.UTF_8).takeWhile(_ != '\u0000')
      val size = Integer.parseInt(new String(b, at + 124, 11, StandardCharsets.US_ASCII).trim, 8)
      out += name -> java.util.Arrays.copyOfRange(b, at + 512, at + 512 + size)
      at += 512 + (size + 511) / 512 * 512
    }
    out.result()
  }

  test("import writes tar shards whose PNGs decode to the IDX pixels, with their labels") {
    requireData()
    TestFiles.withTempDir("fmnist-import")(out => checkImport(out))
  }

  private def checkImport(out: Path): Unit = {
    val report = FashionMnistImport.run(spark, FashionMnistImport.DEBIAN_DIR, "train",
      out.toUri.toString, 50, 3)
    assert(report.get("samples") == 50 && report.get("shards") == 3)
    val shards = Files.list(out).iterator().asScala.filter(_.toString.endsWith(".tar")).toSeq.sorted
    assert(shards.map(_.getFileName.toString) ==
      Seq("train-00000.tar", "train-00001.tar", "train-00002.tar"))
    val entries = shards.flatMap(tarEntries)
    val idx = IdxFiles.images(FashionMnistImport.DEBIAN_DIR.resolve("train-images-idx3-ubyte.gz"),
      0, 50)
    val labels = IdxFiles.labels(FashionMnistImport.DEBIAN_DIR.resolve(
      "train-labels-idx1-ubyte.gz"), 0, 50)
    assert(entries.size == 100)
    for (i <- 0 until 50) {
      val key = f"train-$i%05d"
      val png = ImageIO.read(new ByteArrayInputStream(entries.find(_._1 == key + ".png").get._2))
      val pixels = new Array[Byte](28 * 28)
      png.getRaster.getDataElements(0, 0, 28, 28, pixels)
      assert(pixels.sameElements(idx.pixels()(i)), s"$key: pixels differ from the IDX file")
      val cls = new String(entries.find(_._1 == key + ".cls").get._2, StandardCharsets.US_ASCII)
      assert(cls.toInt == labels(i))
    }
    assert(labels.toSet.size > 5, "the first 50 samples span several classes")
  }

  test("two DDP trainers launched by train learn Fashion-MNIST far above chance") {
    requireData()
    TestFiles.withTempDir("fmnist-example")(work => train(work))
  }

  private def train(work: Path): Unit = {
    val o = options(limit = 6000, testLimit = 2000, work = work)
    val r = ExampleCommand.run(spark, o)
    assert(Files.isDirectory(work.resolve("shards")), "a --work directory the user named is kept")
    for (rank <- 0 until 2) { // the script keeps its model with the loader's state
      assert(Files.isRegularFile(work.resolve(s"checkpoints/rank-$rank.pt")), s"rank $rank's checkpoint")
    }
    val accuracy = r.get("test_accuracy").asInstanceOf[Double]
    assert(accuracy > 0.6, s"accuracy $accuracy (chance is 0.1)")
    // 6000 samples, 2 ranks x 64, DROP_LAST: 46 batches per rank, every one trained on.
    assert(r.get("train_samples") == 46L * 2 * 64)
    assert(r.get("train_batches") == 92L)
    assert(r.get("test_samples") == 2000L)
    assert(r.get("restarts") == 0)
    assert(r.get("trainer_wait_s").asInstanceOf[Double] >= 0)
    val rate = r.get("images_per_s").asInstanceOf[Double] // the summary line's images/s
    assert(rate > 0 && !rate.isNaN && !rate.isInfinite, s"images_per_s $rate")
    for (rank <- 0 until 2) { // the script's own reports: what each rank trained on
      val n = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(work.resolve(s"reports/rank-$rank.json").toFile)
      assert(n.get("train_samples").asLong == 46L * 64 && n.get("batches").asLong == 46L)
    }
    val trainers = r.get("train").asInstanceOf[java.util.Map[String, Object]].get("trainers")
      .asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
    assert(trainers.map(_.get("exit_code")) == Seq(0, 0))
  }

  test("a Python without torch is refused before the import, naming it and --python") {
    val o = options(python = "/bin/false")
    try {
      val e = intercept[IllegalArgumentException](ExampleCommand.run(spark, o))
      assert(e.getMessage.contains("'/bin/false' cannot import torch") && e.getMessage.contains(
        "--python /usr/bin/python3"), e.getMessage)
      assert(!Files.exists(o.work()), s"${o.work()} left behind")
    } finally TestFiles.deleteRecursively(o.work())
  }

  test("without --work the example removes the work directory it made, also when it fails") {
    val o = options(source = Paths.get("/nonexistent-fmnist"))
    assert(Files.isDirectory(o.work()) && o.work().getFileName.toString.startsWith("spindle-example-"))
    try {
      intercept[Exception](ExampleCommand.run(spark, o))
      assert(!Files.exists(o.work()), s"${o.work()} left behind")
    } finally TestFiles.deleteRecursively(o.work())
  }

  /** The example's options with its command line's defaults; no work directory: a new one. */
  private def options(epochs: Int = 1, limit: Int = 60000, world: Int = 2, batch: Int = 64,
      testLimit: Int = 10000, work: Path = null, source: Path = FashionMnistImport.DEBIAN_DIR,
      python: String = "/usr/bin/python3") =
    ExampleCommand.options(epochs, limit, world, batch, testLimit, work, source, python)
}
