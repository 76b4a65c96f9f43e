package dev.spindle.spark.testkit

import java.net.URI
import java.nio.file.Path

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileSystem
import org.apache.hadoop.hdfs.MiniDFSCluster

/**
 * A real HDFS for tests: a NameNode and one DataNode in this JVM (Hadoop's `MiniDFSCluster`, from
 * `hadoop-client-minicluster`), on loopback ports the kernel chooses, storing blocks under `base`.
 * `hdfs://127.0.0.1:<port>/...` URIs need no other setting. Lives from construction to [[close]].
 */
final class HdfsServer(base: Path) extends RemoteStore {
  private val cluster: MiniDFSCluster = {
    val conf = new Configuration()
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.toAbsolutePath.toString)
    conf.set("dfs.namenode.rpc-address", "127.0.0.1:0")
    conf.set("dfs.datanode.address", "127.0.0.1:0")
    conf.set("dfs.datanode.http.address", "127.0.0.1:0")
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0")
    conf.set("dfs.namenode.http-address", "127.0.0.1:0")
    new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build()
  }
  cluster.waitClusterUp()

  /** `hdfs://127.0.0.1:<port>`. */
  def root: String = cluster.getURI.toString.stripSuffix("/")

  override def uri(path: String): String = s"$root/${path.stripPrefix("/")}"

  /** Nothing: an `hdfs://` URI names its NameNode. */
  override def sparkSettings: Map[String, String] = Map.empty

  /** A new client of this HDFS (the caller closes it). */
  override def fileSystem(): FileSystem = FileSystem.newInstance(URI.create(root), new Configuration())

  override def close(): Unit = cluster.shutdown(true)
}
