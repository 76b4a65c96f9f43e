package dev.spindle.spark.testkit

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles.ascii

/**
 * A tiny pre-tokenised text corpus, for the examples of samples without an image: sentence `i` is
 * drawn from a small grammar by (seed, i), its tokens are the ids of its words in [[Vocabulary]]
 * (a whitespace tokenizer over a fixed, sorted word list: id 0 is never a word, the padding id).
 * Written as Parquet (`text` VARCHAR, `tokens` INTEGER[], no image and no label column) or as
 * WebDataset tars whose members are only `.txt` (the sentence), `.tok` (its tokens as a JSON array)
 * and `.json` (`{"words": N}`).
 */
object TextCorpus {
  private val Subjects = Seq("the cat", "a dog", "the old owl", "my fox", "an eel", "the small bird")
  private val Verbs = Seq("sees", "chases", "likes", "follows", "hears")
  private val Objects = Seq("the moon", "a red ball", "the river", "some fish", "the tall tree")
  private val Ends = Seq("today", "at night", "again", "slowly", "in the rain")

  /** Every word of the grammar, sorted; a word's token id is its position + 1. */
  val Vocabulary: Seq[String] =
    (Subjects ++ Verbs ++ Objects ++ Ends).flatMap(_.split(' ')).distinct.sorted

  def key(i: Int): String = f"doc-$i%06d"
  def number(key: String): Int = key.stripPrefix("doc-").toInt

  /** Sentence `i`: subject, verb, object and an ending, chosen by `i`'s own generator. */
  def sentence(i: Int): String = {
    val r = new scala.util.Random(1000L + i)
    Seq(Subjects, Verbs, Objects, Ends).map(words => words(r.nextInt(words.size))).mkString(" ")
  }

  /** The whitespace tokenizer: each word's id in [[Vocabulary]] (from 1). */
  def tokens(text: String): Seq[Int] = text.split(' ').toSeq.map(w => Vocabulary.indexOf(w) + 1)

  /**
   * Sentences `0 until n` as `files` Parquet files `dir/text-NNN.parquet` (rows split in order),
   * written by DuckDB: `text` VARCHAR and `tokens` INTEGER[]; row `nullText`'s text is null.
   * Returns `dir`.
   */
  def writeParquet(dir: Path, n: Int, files: Int = 1, nullText: Int = -1): Path = {
    Files.createDirectories(dir)
    val work = Files.createTempDirectory(dir.getParent, "_text")
    try {
      val perFile = (n + files - 1) / files
      val statements = (0 until files).map { f =>
        val csv = work.resolve(s"rows-$f.csv")
        val lines = (f * perFile until math.min(n, (f + 1) * perFile)).map { i =>
          s"$i\t${sentence(i)}\t${tokens(sentence(i)).mkString(" ")}"
        }
        Files.write(csv, ("row\ttext\ttok" +: lines).asJava)
        s"""COPY (SELECT CASE WHEN row = $nullText THEN NULL ELSE text END AS text,
           |  list_transform(string_split(tok, ' '), x -> x::INTEGER)::INTEGER[] AS tokens
           |  FROM read_csv('$csv', header = true, delim = '\t',
           |    columns = {'row': 'INTEGER', 'text': 'VARCHAR', 'tok': 'VARCHAR'}) ORDER BY row)
           |TO '${dir.resolve(f"text-$f%03d.parquet")}' (FORMAT parquet)""".stripMargin
      }
      ParquetInputs.duckdb(statements: _*)
    } finally TestFiles.deleteRecursively(work)
    dir
  }

  /** `shards` tars `text-NNN.tar` of `perShard` samples each (`.txt`, `.tok`, `.json`); returns `dir`. */
  def writeTars(dir: Path, shards: Int, perShard: Int): Path = {
    Files.createDirectories(dir)
    for (s <- 0 until shards) {
      val members = (s * perShard until (s + 1) * perShard).flatMap(i => this.members(i))
      TestFiles.writeTar(dir.resolve(f"text-$s%03d.tar"), members)
    }
    dir
  }

  /** The members of sample `i` in a tar. */
  def members(i: Int): Seq[(String, Array[Byte])] = {
    val text = sentence(i)
    Seq(
      s"${key(i)}.txt" -> text.getBytes("UTF-8"),
      s"${key(i)}.tok" -> ascii(tokens(text).mkString("[", ", ", "]")),
      s"${key(i)}.json" -> ascii(s"""{"words": ${tokens(text).size}}"""))
  }
}
