package dev.spindle.spark.image

/**
 * Run by NativeResampleSuite in a JVM with `-Dspindle.image.nativeResample=LEVEL`: transforms a
 * JPEG through the public apply and prints the resample it ran and a checksum of the output.
 */
object NativeLevelMain {
  def main(args: Array[String]): Unit = {
    val jpeg = ImageTestSupport.encode("jpg", 190, 130)((x, y) =>
      (x * 7 % 256) << 16 | (y * 3 % 256) << 8 | ((x * y) % 256))
    val t = ImageTransform.parse("resize(72),center_crop(64),normalize")
    val out = ImageTestSupport.applyTo(t, jpeg)
    println(s"resample=${ImageTransform.resamplePath()} level=${ImageTransform.nativeResample()}" +
      s" sum=${java.util.Arrays.hashCode(out)}")
  }
}
