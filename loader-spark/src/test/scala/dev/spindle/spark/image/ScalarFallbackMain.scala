package dev.spindle.spark.image

/**
 * Run by VectorResampleSuite in a JVM without `--add-modules=jdk.incubator.vector`: transforms
 * one image and prints the resample path and a checksum of the output.
 */
object ScalarFallbackMain {
  def main(args: Array[String]): Unit = {
    ImageTransform.preload()
    val png = ImageTestSupport.encode("png", 90, 70)((x, y) => (x * 3) << 16 | (y * 5) << 8 | (x ^ y))
    val out = ImageTestSupport.applyTo(ImageTransform.parse("resize(40),center_crop(32),normalize"), png)
    println(s"resample=${ImageTransform.resampleImplementation()} sum=${out.map(_ & 0xff).sum}")
  }
}
