package dev.spindle.spark.train
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * What the train tests read back from `train/record_trainer.py`: per rank the batches it recorded
 * (after each completed step) and the environment of each trainer process it ran as.
 */
object TrainRuns {
  val Python = "/usr/bin/python3"
  private val Json = new ObjectMapper()

  /** The test script (a file of the test resources). */
  val Script: Path = Paths.get(getClass.getResource("/train/record_trainer.py").toURI)

  /** One recorded step, by the trainer process `pid`. */
  case class Step(rank: Int, epoch: Int, batch: Long, len: Long, indices: Seq[Long], weights: Seq[Double],
      pid: Long)

  def steps(out: Path, rank: Int): Seq[Step] = {
    val f = out.resolve(s"rank-$rank.jsonl")
    if (!Files.exists(f)) Seq.empty
    else Files.readAllLines(f).asScala.toSeq.map { line =>
      val n = Json.readTree(line)
      Step(rank, n.get("epoch").asInt, n.get("batch").asLong, n.get("len").asLong,
        n.get("indices").elements().asScala.map(_.asLong).toSeq,
        n.get("weights").elements().asScala.map(_.asDouble).toSeq, n.get("pid").asLong)
    }
  }

  /** Every trainer process's record: its environment, pid and process group. */
  def trainers(out: Path): Seq[JsonNode] = {
    val files = Files.list(out).iterator().asScala.filter(_.getFileName.toString.startsWith("env-"))
    files.toSeq.map(f => Json.readTree(f.toFile))
  }

  /** (epoch, index) of every real row (weight 1) the ranks completed a step with. */
  def realRows(out: Path, world: Int): Seq[(Int, Long)] =
    (0 until world).flatMap(r => steps(out, r)).flatMap { s =>
      s.indices.zip(s.weights).collect { case (i, w) if w == 1.0 => (s.epoch, i) }
    }

  def torchAvailable: Boolean = {
    val p = new ProcessBuilder(Python, "-c", "import torch, torch.distributed")
      .redirectErrorStream(true).start()
    p.getInputStream.readAllBytes()
    p.waitFor() == 0
  }

  def alive(pid: Long): Boolean = ProcessHandle.of(pid).map[Boolean](_.isAlive).orElse(false)
}
