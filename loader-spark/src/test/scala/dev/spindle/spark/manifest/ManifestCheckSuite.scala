package dev.spindle.spark.manifest
import java.util.{List => JList}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import dev.spindle.spark.shard.{FolderEntry, Shard, ShardFormat}
import dev.spindle.spark.plan.Plans
class ManifestCheckSuite extends AnyFunSuite {
  private val tars = Plans.manifest(Seq(10, 20, 30))
  private def listing(m: Manifest) =
    m.shards().asScala.map(s => new FileFacts(s.uri(), s.bytes(), s.modificationTime())).toSeq
  private def check(m: Manifest, files: Seq[FileFacts]) = ManifestCheck.compare(m, files.asJava)

  test("an unchanged listing matches") {
    val c = check(tars, listing(tars))
    assert(c.unchanged())
    c.requireUnchanged()
    assert(c.shardsToRecount().isEmpty && !c.needsRelist())
  }

  test("a shard whose size or modification time changed is reported and listed for re-counting") {
    val files = listing(tars).zipWithIndex.map {
      case (f, 1) => new FileFacts(f.uri(), f.bytes() + 5, f.modificationTime())
      case (f, 2) => new FileFacts(f.uri(), f.bytes(), f.modificationTime() + 1)
      case (f, _) => f
    }
    val c = check(tars, files)
    assert(c.changes().asScala.map(_.kind()) == Seq(ManifestCheck.Kind.SIZE_CHANGED, ManifestCheck.Kind.MODIFIED))
    assert(c.shardsToRecount().toSeq == Seq(1, 2))
    assert(!c.needsRelist())
    val e = intercept[IllegalStateException](c.requireUnchanged())
    assert(e.getMessage.contains("The data changed since the manifest of file:/data was written"), e.getMessage)
    assert(e.getMessage.contains("file:/data/shard-00001.tar: size 1020 → 1025 bytes"), e.getMessage)
    assert(e.getMessage.contains("file:/data/shard-00002.tar: modified"), e.getMessage)
  }

  test("missing and added shards need a new listing") {
    val files = listing(tars).drop(1) :+ new FileFacts("file:/data/shard-00009.tar", 5, 5)
    val c = check(tars, files)
    assert(c.changes().asScala.map(x => (x.shard(), x.kind())) == Seq((0, ManifestCheck.Kind.MISSING)))
    assert(c.addedFiles().asScala == Seq("file:/data/shard-00009.tar"))
    assert(c.needsRelist())
    assert(c.shardsToRecount().isEmpty)
    assert(c.describe().contains("file:/data/shard-00009.tar: added"))
    assert(c.describe().contains("file:/data/shard-00000.tar: missing"))
  }

  test("a folder shard is compared by its files' total size and newest modification time") {
    val m = new Manifest("file:/img", JList.of(
      new Shard("file:/img", ShardFormat.IMAGE_FOLDER, 30L, 900L, 2L,
        JList.of(new FolderEntry("a/1.jpg", 0), new FolderEntry("b/2.jpg", 1)))), JList.of("a", "b"))
    val same = Seq(new FileFacts("file:/img/a/1.jpg", 10, 900), new FileFacts("file:/img/b/2.jpg", 20, 100))
    assert(check(m, same).unchanged())
    val touched = Seq(same(0), new FileFacts("file:/img/b/2.jpg", 20, 1000))
    assert(check(m, touched).changes().get(0).kind() == ManifestCheck.Kind.MODIFIED)
    val gone = check(m, Seq(same(1)))
    assert(gone.changes().get(0).detail() == "1 of 2 files missing, first a/1.jpg")
    val extra = check(m, same :+ new FileFacts("file:/img/a/3.jpg", 1, 1))
    assert(extra.addedFiles().asScala == Seq("file:/img/a/3.jpg") && extra.needsRelist())
  }

  test("a folder root with a trailing slash joins its files with one slash") {
    assert(ManifestCheck.join("file:/img/", "a/1.jpg") == "file:/img/a/1.jpg")
    assert(ManifestCheck.join("file:/img", "a/1.jpg") == "file:/img/a/1.jpg")
  }

  test("the error lists the first ten changes and says there are more") {
    val many = Plans.manifest(Seq.fill(25)(1L))
    val c = check(many, Seq.empty)
    assert(c.changes().size() == 25)
    val message = c.describe()
    assert(message.contains("(25 shards changed, 0 files added)"))
    assert(message.contains("shard-00009.tar: missing") && !message.contains("shard-00010.tar"))
    assert(message.contains("; …"))
  }
}
