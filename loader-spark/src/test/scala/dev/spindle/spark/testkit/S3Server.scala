package dev.spindle.spark.testkit

import java.net.URI
import java.util.Properties

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileSystem
import org.gaul.s3proxy.{AuthenticationType, S3Proxy}
import org.jclouds.ContextBuilder
import org.jclouds.blobstore.BlobStoreContext

/**
 * A real S3 server on loopback for tests: S3Proxy (from Maven Central, in this JVM) over jclouds'
 * in-memory `transient` store, with a bucket made, path-style access and SigV4 authentication
 * against dummy credentials. Spindle reaches it the way users reach S3, through S3A and Hadoop's
 * usual `fs.s3a.*` settings ([[hadoopSettings]]); S3A holds the only client.
 *
 * The server lives from [[start]] to [[close]]; objects live as long as the server. Its port is
 * chosen by the kernel and its bucket's name is new, so suites running at the same time never
 * collide, nor do Hadoop's cached file systems (cached by bucket) of servers started one after
 * another in one JVM. A driver JVM forked by a
 * test reaches it too: [[forkedJvmSettings]] and [[credentialsEnvironment]] (credentials through the
 * environment, as users should pass them, never on a command line).
 */
final class S3Server(
    val bucket: String = "spindle-test-" + java.util.UUID.randomUUID().toString.take(8))
    extends RemoteStore {
  import S3Server._

  private val context: BlobStoreContext = ContextBuilder.newBuilder("transient")
    .overrides(new Properties()).build(classOf[BlobStoreContext])
  private val proxy: S3Proxy = S3Proxy.builder()
    .blobStore(context.getBlobStore)
    .endpoint(URI.create("http://127.0.0.1:0"))
    .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, AccessKey, SecretKey)
    // the SDK sends x-amz-checksum-crc32 with a bulk delete (DeleteObjects), a header S3Proxy 2.6
    // refuses as unknown (501) unless told to pass over it
    .ignoreUnknownHeaders(true)
    .build()

  /** Starts the server (waits until it listens) and creates the bucket. */
  def start(): S3Server = {
    proxy.start()
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    while (proxy.getState != "STARTED") {
      if (proxy.getState == "FAILED" || System.nanoTime() > deadline) {
        throw new IllegalStateException(s"S3Proxy did not start: ${proxy.getState}")
      }
      Thread.sleep(10)
    }
    context.getBlobStore.createContainerInLocation(null, bucket)
    this
  }

  /** The server's HTTP endpoint, e.g. `http://127.0.0.1:40123`. */
  def endpoint: String = s"http://127.0.0.1:${proxy.getPort}"

  /** `s3a://bucket/path`. */
  override def uri(path: String): String = s"s3a://$bucket/${path.stripPrefix("/")}"

  /** S3A's settings for this server, keyed as in a Hadoop Configuration (`fs.s3a.*`). */
  def hadoopSettings: Map[String, String] = connection ++ Map(
    "fs.s3a.access.key" -> AccessKey,
    "fs.s3a.secret.key" -> SecretKey,
    "fs.s3a.aws.credentials.provider" -> "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider")

  /** The same, as Spark settings (`spark.hadoop.fs.s3a.*`) for a SparkSession. */
  override def sparkSettings: Map[String, String] = hadoopSettings.map { case (k, v) => s"spark.hadoop.$k" -> v }

  /**
   * Spark settings for a driver JVM a test forks: the connection only; the credentials reach it
   * through [[credentialsEnvironment]], which S3A's environment credential provider reads.
   */
  def forkedJvmSettings: Map[String, String] = connection.map { case (k, v) => s"spark.hadoop.$k" -> v } +
    ("spark.hadoop.fs.s3a.aws.credentials.provider" ->
      "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider")

  /** The standard AWS environment variables holding this server's credentials. */
  def credentialsEnvironment: Map[String, String] =
    Map("AWS_ACCESS_KEY_ID" -> AccessKey, "AWS_SECRET_ACCESS_KEY" -> SecretKey)

  /** A Hadoop Configuration for this server (no other settings). */
  def configuration(): Configuration = {
    val conf = new Configuration()
    hadoopSettings.foreach { case (k, v) => conf.set(k, v) }
    conf
  }

  /** S3A's file system for the bucket (a new instance: the caller closes it). */
  override def fileSystem(): FileSystem = FileSystem.newInstance(URI.create(uri("")), configuration())

  override def close(): Unit =
    try proxy.stop()
    finally context.close()

  private def connection: Map[String, String] = Map(
    "fs.s3a.endpoint" -> endpoint,
    "fs.s3a.endpoint.region" -> "us-east-1",
    "fs.s3a.path.style.access" -> "true",
    "fs.s3a.connection.ssl.enabled" -> "false",
    // the bucket exists (start() made it): no probe at every file system's creation
    "fs.s3a.bucket.probe" -> "0",
    // S3Proxy's transient store keeps no version ids; ETags are checked as on S3
    "fs.s3a.change.detection.version.required" -> "false")
}

object S3Server {
  /** Dummy credentials, known to the tests only; the suites check that no report or log shows them. */
  val AccessKey = "spindle-test-access"
  val SecretKey = "spindle-test-secret-0123456789"
}
