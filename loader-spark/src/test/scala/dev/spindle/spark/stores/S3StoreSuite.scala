package dev.spindle.spark.stores

import java.nio.file.Path

import dev.spindle.spark.testkit.{RemoteStore, S3Server}

/** [[StoreContract]] on a real S3 server (S3Proxy) through S3A. */
class S3StoreSuite extends StoreContract {
  override protected def storeName: String = "S3"
  override protected def startStore(base: Path): RemoteStore = new S3Server().start()
}
