package dev.spindle.spark.stores

import java.nio.file.Path

import dev.spindle.spark.testkit.{HdfsServer, RemoteStore}

/** [[StoreContract]] on a real HDFS: a NameNode and a DataNode in this JVM. */
class HdfsStoreSuite extends StoreContract {
  override protected def storeName: String = "HDFS"
  override protected def startStore(base: Path): RemoteStore = new HdfsServer(base)
}
