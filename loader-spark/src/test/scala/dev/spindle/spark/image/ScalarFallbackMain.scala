package dev.spindle.spark.image

import scala.jdk.CollectionConverters._

import org.bytedeco.javacpp.Loader

/**
 * Run by VectorResampleSuite in a fresh JVM (with and without
 * `--add-modules=jdk.incubator.vector`): preloads, transforms one PNG, and prints the resample path
 * and a checksum of the output, and whether OpenCV's libraries were loaded after the preload and
 * after the PNG.
 */
object ScalarFallbackMain {
  private def openCvLoaded: Boolean =
    Loader.getLoadedLibraries.keySet.asScala.exists(_.contains("opencv_core"))

  def main(args: Array[String]): Unit = {
    ImageTransform.preload()
    println(s"native-jpeg=${NativeJpeg.AVAILABLE} opencv-after-preload=$openCvLoaded")
    val png = ImageTestSupport.encode("png", 90, 70)((x, y) => (x * 3) << 16 | (y * 5) << 8 | (x ^ y))
    val out = ImageTestSupport.applyTo(ImageTransform.parse("resize(40),center_crop(32),normalize"), png)
    println(s"opencv-after-png=$openCvLoaded")
    println(s"resample=${ImageTransform.resampleImplementation()} sum=${out.map(_ & 0xff).sum}")
  }
}
