package dev.spindle.spark.shard

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, IOException, ObjectInputStream, ObjectOutputStream}

import dev.spindle.spark.testkit.SparkFixture
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * How a task carries its Hadoop configuration: in full (every property, whatever the reader's JVM),
 * or under a local master, where tasks run in the driver's JVM, as a number naming the driver's own
 * configuration (a task of train carried two full copies, 238 KB, serialized twice before its job
 * started). A non-local master's tasks (local-cluster) are the cluster suites'.
 */
class HadoopConfSuite extends AnyFunSuite with SparkFixture {

  private def bytes(c: HadoopConf): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val o = new ObjectOutputStream(out)
    o.writeObject(c)
    o.close()
    out.toByteArray
  }

  private def read(b: Array[Byte]): HadoopConf =
    new ObjectInputStream(new ByteArrayInputStream(b)).readObject().asInstanceOf[HadoopConf]

  test("in full: every property travels, into a configuration of the reader's own") {
    val conf = new Configuration()
    conf.set("spindle.test.key", "value")
    val b = bytes(new HadoopConf(conf))
    assert(b.length > 10000, b.length) // Hadoop's defaults with it
    val back = read(b).get()
    assert(back ne conf)
    assert(back.get("spindle.test.key") == "value")
    assert(back.get("fs.defaultFS") == conf.get("fs.defaultFS"))
    assert(back.size() == conf.size())
  }

  test("under a local master: the driver's configuration object itself, by number") {
    val sc = spark.sparkContext
    assert(sc.isLocal)
    val shipped = HadoopConf.of(sc)
    val b = bytes(shipped)
    assert(b.length < 200, b.length)
    val back = read(b).get()
    assert(back eq sc.hadoopConfiguration)
    sc.hadoopConfiguration.set("spindle.test.later", "seen")
    assert(back.get("spindle.test.later") == "seen") // what a task reading it now would see
    // one number per configuration, however often it is shipped
    assert(java.util.Arrays.equals(bytes(HadoopConf.of(sc)), b))
  }

  test("a local number whose configuration this JVM does not hold is refused by name") {
    val b = bytes(HadoopConf.of(spark.sparkContext))
    // the same stream with another number, as a JVM that never shipped it reads it: the number is
    // the block data's 8 bytes before the stream's last byte (the end of block data)
    assert(b(b.length - 1) == 0x78 && b(b.length - 10) == 0x08, b.takeRight(10).mkString(","))
    val other = b.clone()
    other(b.length - 9) = 0x7f
    for (i <- b.length - 8 until b.length - 1) other(i) = 0xff.toByte
    val e = intercept[IOException](read(other))
    assert(e.getMessage.contains("of a local master is not in this JVM"), e.getMessage)
  }
}
