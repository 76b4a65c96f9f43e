package dev.spindle.spark.iobench

import java.io.BufferedInputStream
import java.nio.ByteBuffer
import java.nio.file.{Files, Path => NioPath}
import java.util.concurrent.{Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileRange, FileSystem, Path}
import org.apache.hadoop.fs.Options.OpenFileOptions
import org.scalatest.funsuite.AnyFunSuite

/**
 * The counted store's request model on real files: what each call an object store's client makes
 * costs in requests and bytes, and that every way of opening or listing goes through the count.
 */
class CountingFileSystemSuite extends AnyFunSuite {
  private val Size = 100000

  private def conf(latencyMs: Long = 0): Configuration = {
    val c = new Configuration()
    c.set(CountingFileSystem.IMPL_KEY, classOf[CountingFileSystem].getName)
    c.setBoolean("fs.counted.impl.disable.cache", true)
    c.setLong(CountingFileSystem.LATENCY_KEY, latencyMs)
    c
  }

  /** A file of Size bytes where byte i is i % 251, and its path through the counted store. */
  private def withFile(body: (NioPath, Path) => Unit): Unit =
    TestFiles.withTempDir("counted-store") { dir =>
      val file = dir.resolve("data.bin")
      Files.write(file, Array.tabulate[Byte](Size)(i => (i % 251).toByte))
      body(dir, new Path(CountingFileSystem.uriOf(file)))
    }

  private def fs(p: Path, latencyMs: Long = 0): FileSystem = p.getFileSystem(conf(latencyMs))

  /** The counters' change over `body`. */
  private def counted(body: => Unit): StoreCounters.Counts = {
    val before = StoreCounters.snapshot()
    body
    StoreCounters.snapshot().minus(before)
  }

  private def expected(from: Int, n: Int): Array[Byte] =
    Array.tabulate[Byte](n)(i => ((from + i) % 251).toByte)

  test("a whole file read sequentially is one request, and every byte returned is counted") {
    withFile { (_, p) =>
      val in = fs(p).open(p)
      val c = counted {
        val all = in.readAllBytes()
        assert(all.sameElements(expected(0, Size)))
      }
      in.close()
      assert(c.requests == 1 && c.bytes == Size && c.listings == 0 && c.statuses == 0)
      assert(counted(fs(p).open(p).close()).opens == 1, "an open is counted, and costs no request")
      assert(counted(fs(p).open(p).close()).requests == 0)
    }
  }

  test("two reads separated by a seek are two requests; a seek to where a read ended is none") {
    withFile { (_, p) =>
      val in = fs(p).open(p)
      val b = new Array[Byte](1000)
      val c = counted {
        in.readFully(b)
        in.seek(50000)
        in.readFully(b)
        assert(b.sameElements(expected(50000, 1000)))
        in.seek(51000) // where the last read ended: the same request goes on
        in.readFully(b)
        assert(b.sameElements(expected(51000, 1000)))
        in.seek(10) // back: a new request
        in.readFully(b)
        assert(b.sameElements(expected(10, 1000)))
      }
      in.close()
      assert(c.requests == 3 && c.bytes == 4000)
    }
  }

  test("each positioned read is one request and leaves the stream where it was") {
    withFile { (_, p) =>
      val in = fs(p).open(p)
      val b = new Array[Byte](500)
      val c = counted {
        in.readFully(b, 0, 100) // sequential, request 1
        in.readFully(2000L, b)
        assert(b.sameElements(expected(2000, 500)))
        assert(in.read(70000L, b, 0, 500) == 500)
        assert(b.sameElements(expected(70000, 500)))
        val buf = ByteBuffer.allocate(300)
        in.readFully(90000L, buf)
        assert(buf.array().sameElements(expected(90000, 300)))
        assert(in.getPos == 100)
        in.readFully(b, 0, 100) // continues request 1
        assert(b.take(100).sameElements(expected(100, 100)))
      }
      in.close()
      assert(c.requests == 4 && c.bytes == 100 + 500 + 500 + 300 + 100)
    }
  }

  test("a skip within what a reader's buffer holds costs nothing; past it, the next read is a request") {
    withFile { (_, p) =>
      val raw = fs(p).open(p)
      val in = new BufferedInputStream(raw, 4096)
      val c = counted {
        assert(in.read() == 0) // fills 4096 bytes: request 1
        assert(in.skip(1000) == 1000) // inside the buffer
        assert(in.read() == 1001 % 251)
        val within = StoreCounters.snapshot()
        var left = 20000L // past the buffer: the rest of it, then the stream's own (lazy) skip
        while (left > 0) left -= in.skip(left)
        assert(StoreCounters.snapshot().minus(within).requests == 0, "a skip alone costs nothing")
        assert(in.read() == (1002 + 20000) % 251) // request 2
      }
      in.close()
      assert(c.requests == 2 && c.bytes == 2 * 4096)
    }
  }

  test("openFile builders, with a read policy and the length, open and read through the count") {
    withFile { (_, p) =>
      val c = counted {
        val in = fs(p).openFile(p)
          .opt(OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY, "random")
          .optLong(OpenFileOptions.FS_OPTION_OPENFILE_LENGTH, Size.toLong)
          .build().get()
        val b = new Array[Byte](10)
        in.readFully(5000L, b)
        in.readFully(6000L, b)
        assert(b.sameElements(expected(6000, 10)))
        in.close()
      }
      assert(c.opens == 1 && c.requests == 2 && c.bytes == 20)
      val withStatus = counted {
        val store = fs(p)
        val in = store.openFile(p).withFileStatus(store.getFileStatus(p)).build().get()
        assert(in.read() == 0)
        in.close()
      }
      assert(withStatus.opens == 1 && withStatus.requests == 1 && withStatus.statuses == 1)
    }
  }

  test("a vectored read is one request per range, the ranges waiting their latency together") {
    withFile { (_, p) =>
      val in = fs(p, latencyMs = 300).open(p)
      val ranges = (0 until 6).map(i => FileRange.createFileRange(i * 15000L, 1000)).asJava
      StoreCounters.takePeakWaiting()
      val c = counted {
        in.readVectored(ranges, (n: Int) => ByteBuffer.allocate(n))
        ranges.asScala.zipWithIndex.foreach { case (r, i) =>
          val data = r.getData.get(30, TimeUnit.SECONDS)
          val got = new Array[Byte](data.remaining())
          data.get(got)
          assert(got.sameElements(expected(i * 15000, 1000)), s"range $i")
        }
      }
      in.close()
      assert(c.requests == 6 && c.bytes == 6000)
      assert(StoreCounters.takePeakWaiting() >= 2, "the ranges' requests overlapped")
    }
  }

  test("the latency is paid before each request, by each reader on its own thread") {
    withFile { (_, p) =>
      val store = fs(p, latencyMs = 100)
      val in = store.open(p)
      val b = new Array[Byte](10)
      val start = System.nanoTime()
      in.readFully(b)
      in.readFully(b) // continues: no latency
      in.seek(40000)
      in.readFully(b)
      in.readFully(60000L, b)
      assert((System.nanoTime() - start) / 1e6 >= 300, "three requests, 100 ms each")
      in.close()
      StoreCounters.takePeakWaiting()
      val pool = Executors.newFixedThreadPool(3)
      try {
        val reads = (0 until 3).map(i => pool.submit(new Runnable {
          def run(): Unit = {
            val s = store.open(p)
            try s.readFully(i * 1000L, new Array[Byte](100)) finally s.close()
          }
        }))
        reads.foreach(_.get(30, TimeUnit.SECONDS))
      } finally pool.shutdown()
      assert(StoreCounters.takePeakWaiting() >= 2, "readers on three threads waited at once")
    }
  }

  test("listing, status and globs give counted paths and are counted apart from requests") {
    withFile { (dir, p) =>
      Files.write(dir.resolve("b.bin"), Array[Byte](1, 2, 3))
      val folder = new Path(CountingFileSystem.uriOf(dir))
      val store = fs(folder)
      val c = counted {
        val listed = store.listStatus(folder).map(_.getPath.toString).sorted
        assert(listed.toSeq == Seq(folder.toString + "/b.bin", p.toString))
        assert(listed.forall(_.startsWith("counted:/")))
        assert(store.getFileStatus(p).getLen == Size)
        assert(store.exists(p))
        val files = store.listFiles(folder, true)
        var n = 0
        while (files.hasNext) { assert(files.next().getPath.toString.startsWith("counted:/")); n += 1 }
        assert(n == 2)
        val it = store.listStatusIterator(folder)
        assert(it.next().getPath.toUri.getScheme == "counted")
      }
      assert(c.listings == 3 && c.statuses == 2 && c.requests == 0 && c.opens == 0)
      val globbed = store.globStatus(new Path(folder, "*.bin")).map(_.getPath.toString).sorted
      assert(globbed.toSeq == Seq(folder.toString + "/b.bin", p.toString))
    }
  }

  test("another store's path, or an authority, is refused rather than read uncounted") {
    withFile { (dir, p) =>
      val store = fs(p)
      val plain = new Path(dir.resolve("data.bin").toUri)
      val e = intercept[IllegalArgumentException](store.open(plain))
      assert(e.getMessage.contains("Wrong FS"), e.getMessage)
      val a = intercept[IllegalArgumentException](
        new Path("counted://host" + dir.toAbsolutePath).getFileSystem(conf()))
      assert(a.getMessage.contains("counted:///PATH"), a.getMessage)
    }
  }

  test("writes go to the target under the same path") {
    TestFiles.withTempDir("counted-store-write") { dir =>
      val out = new Path(CountingFileSystem.uriOf(dir.resolve("sub/new.bin")))
      val store = fs(out)
      val s = store.create(out)
      s.write(Array[Byte](7, 8, 9))
      s.close()
      assert(Files.readAllBytes(dir.resolve("sub/new.bin")).toSeq == Seq[Byte](7, 8, 9))
      val moved = new Path(CountingFileSystem.uriOf(dir.resolve("sub/moved.bin")))
      assert(store.rename(out, moved) && Files.exists(dir.resolve("sub/moved.bin")))
      assert(store.delete(moved, false) && !Files.exists(dir.resolve("sub/moved.bin")))
    }
  }
}
