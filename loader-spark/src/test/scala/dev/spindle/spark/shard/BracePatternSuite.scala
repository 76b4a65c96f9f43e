package dev.spindle.spark.shard

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** Brace patterns expand as Python's braceexpand does (WebDataset's shard lists). */
class BracePatternSuite extends AnyFunSuite {
  private def expand(p: String): Seq[String] = BracePattern.parse(p).expand().asScala.toSeq

  private def refused(p: String): String = intercept[IllegalArgumentException](BracePattern.parse(p)).getMessage

  test("numeric ranges keep the bounds' zero padding, count down, and take a step") {
    assert(expand("train-{000000..000003}.tar") ==
      Seq("train-000000.tar", "train-000001.tar", "train-000002.tar", "train-000003.tar"))
    assert(expand("s{8..11}") == Seq("s8", "s9", "s10", "s11"))
    assert(expand("s{08..11}") == Seq("s08", "s09", "s10", "s11"))
    assert(expand("s{3..1}") == Seq("s3", "s2", "s1"))
    assert(expand("s{0..9..4}") == Seq("s0", "s4", "s8"))
    assert(expand("s{7..7}") == Seq("s7"))
  }

  test("lists, nested lists, and several groups multiply with the first varying slowest") {
    assert(expand("{a,b,c}.tar") == Seq("a.tar", "b.tar", "c.tar"))
    assert(expand("{a,}x") == Seq("ax", "x"))
    assert(expand("d/{train,val}-{0..1}.tar") ==
      Seq("d/train-0.tar", "d/train-1.tar", "d/val-0.tar", "d/val-1.tar"))
    assert(expand("{a,b{1..2}}") == Seq("a", "b1", "b2"))
    assert(expand("plain.tar") == Seq("plain.tar"))
    assert(BracePattern.parse("{000000..001281}/{a,b}").size() == 2564L)
    assert(BracePattern.parse("s3a://bucket/x-{0..9}.tar").literalPrefix() == "s3a://bucket/x-")
  }

  test("malformed patterns are refused naming the pattern and the position") {
    assert(refused("a-{0..3.tar") == "Invalid brace pattern \"a-{0..3.tar\" at position 2: '{' is never closed")
    assert(refused("a-0..3}.tar") == "Invalid brace pattern \"a-0..3}.tar\" at position 6: '}' without a matching '{'")
    assert(refused("a-{x}.tar").startsWith("Invalid brace pattern \"a-{x}.tar\" at position 2: the group at 2 is neither"))
    assert(refused("a-{}.tar").contains("at position 2"))
    assert(refused("a-{0..9..0}").contains("at position 2: the range's step is 0"))
    assert(refused("{a,b}}") == "Invalid brace pattern \"{a,b}}\" at position 5: '}' without a matching '{'")
  }

  test("a pattern of more than 10 million names is refused before anything is expanded") {
    val big = "{0..99999}-{0..99}-{0..1}.tar" // 20 million
    val t0 = System.nanoTime()
    assert(refused(big) == "Brace pattern \"" + big + "\" names more than 10000000 shards (the most a pattern may name)")
    assert(refused("{0..999999999999999999}{0..999999999999999999}").contains("more than 10000000"))
    assert((System.nanoTime() - t0) / 1e9 < 1.0, "refused without expanding")
    assert(BracePattern.parse("{0..99999}-{0..99}.tar").size() == 10000000L) // the limit itself is fine
  }

  test("only text with a brace is a pattern") {
    assert(BracePattern.isPattern("d/{0..1}.tar") && BracePattern.isPattern("d/x}.tar"))
    assert(!BracePattern.isPattern("/data/train"))
  }
}
