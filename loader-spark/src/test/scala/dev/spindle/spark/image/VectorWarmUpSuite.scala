package dev.spindle.spark.image

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * What the vector path's warm-up promises: once it is done, photographs go through C2-compiled
 * code for both outputs a loader delivers (float32 CHW and uint8 HWC), which allocates only the
 * per-image objects. Code that is not compiled yet boxes every vector (megabytes per photo), and a
 * warm-up that stopped at "fast enough" left the uint8 pass so: its first batch then allocated
 * 450 MB.
 */
class VectorWarmUpSuite extends AnyFunSuite {

  test("after the warm-up, photos go through compiled code for float32 CHW and for uint8 HWC") {
    assume(VectorPath.ENABLED, s"vector path off: ${VectorPath.describe()}")
    VectorPath.warmUpNow()
    assert(VectorPath.ready())
    val mx = ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
    assume(mx.isThreadAllocatedMemorySupported && mx.isThreadAllocatedMemoryEnabled)
    val photos = new File(getClass.getResource("/photos").toURI).listFiles()
      .filter(_.getName.endsWith(".jpg")).sortBy(_.getName).toSeq
    assert(photos.nonEmpty)
    for (spec <- Seq("resize(256),center_crop(224),normalize", "resize(256),center_crop(224)")) {
      val t = ImageTransform.parse(spec)
      withBuffer(t.outputBytes()) { buf =>
        for (photo <- photos) {
          val data = Files.readAllBytes(photo.toPath)
          t.apply(data, 0, data.length, 0L, buf, 0L) // this thread's buffers grow to the photo's size
          val before = mx.getCurrentThreadAllocatedBytes
          t.apply(data, 0, data.length, 1L, buf, 0L)
          val allocated = mx.getCurrentThreadAllocatedBytes - before
          assert(allocated < 64 * 1024, s"$spec ${t.outputMode()} on ${photo.getName}: $allocated bytes")
        }
      }
    }
  }
}
