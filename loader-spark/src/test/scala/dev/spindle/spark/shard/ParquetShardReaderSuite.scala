package dev.spindle.spark.shard

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, IOException, InputStream}
import java.lang.management.ManagementFactory
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.{ParquetInputs, SparkFixture, TestFiles}
import dev.spindle.spark.testkit.ParquetInputs.Sample
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path => HPath}
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.bytes.BytesInput
import org.apache.parquet.format.{FileMetaData, PageHeader, Util}
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.hadoop.util.{HadoopCodecs, HadoopInputFile}
import org.apache.parquet.io.{DelegatingSeekableInputStream, InputFile, ParquetDecodingException, SeekableInputStream}
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.manifest.ShardCatalog

/** Parquet shards written by Spark and by DuckDB: counting, reading, skipping, bad input. */
class ParquetShardReaderSuite extends AnyFunSuite with SparkFixture {
  private val conf = new Configuration()
  private val limits = new SampleLimits(1 << 20, 0)
  private val big64 = new SampleLimits(64 << 20, 0)

  private def manifest(dir: Path, columns: ParquetColumns = ParquetColumns.DEFAULT): Manifest =
    new ShardCatalog(conf, 1000, columns).list(dir.toString, ShardCatalog.Counter.onThisThread(conf))

  private def readAll(shard: Shard, positions: Array[Int] = null, l: SampleLimits = limits): Seq[Sample] = {
    val r = if (positions == null) ShardReader.open(shard, conf, l) else ShardReader.open(shard, conf, l, positions)
    try r.asScala.map(s => Sample(s.image, s.label, s.key + "|" + s.problem)).toSeq finally r.close()
  }

  private def rowGroups(file: String): Seq[Long] = {
    val r = ParquetFileReader.open(HadoopInputFile.fromPath(new HPath(file), conf))
    try r.getRowGroups.asScala.map(_.getRowCount).toSeq finally r.close()
  }

  /** Every shard of `dir` read whole equals `rows`: bytes, labels, keys `shard-00S.parquet#J`. */
  private def checkReads(dir: Path, rows: Seq[Seq[Sample]]): Unit = {
    val m = manifest(dir)
    assert(m.shards.asScala.map(_.format).toSet == Set(ShardFormat.PARQUET))
    assert(m.shards.asScala.map(_.samples) == rows.map(_.size.toLong))
    m.shards.asScala.zip(rows).zipWithIndex.foreach { case ((shard, expected), s) =>
      val got = readAll(shard)
      assert(got.map(_.path) == expected.indices.map(j => f"shard-$s%03d.parquet#$j|null"))
      assert(got.map(_.label) == expected.map(_.label))
      assert(got.map(_.image.toSeq) == expected.map(_.image.toSeq))
    }
  }

  test("Spark-written Parquet, BINARY and {bytes, path}: counted from footers, every row a sample") {
    for (struct <- Seq(false, true)) TestFiles.withTempDir("pq-spark") { dir =>
      val rows = FeedData.rows(Seq(5, 9))
      ParquetInputs.spark(spark, dir, rows, struct)
      assert(rowGroups(dir.resolve("shard-001.parquet").toString).size >= 2, "several row groups")
      checkReads(dir, rows)
      val shard = manifest(dir).shards.get(1)
      val some = readAll(shard, Array(0, 3, 4, 8))
      assert(some.map(_.path.takeWhile(_ != '|')) == Seq(0, 3, 4, 8).map(j => s"shard-001.parquet#$j"))
      assert(some.map(_.image.toSeq) == Seq(0, 3, 4, 8).map(j => rows(1)(j).image.toSeq))
      assert(readAll(shard, Array(7, 9, 12)).map(_.label) == Seq(Int.box(7))) // past the end: not returned
    }
  }

  test("DuckDB-written Parquet, BLOB and {bytes, path}: counted and read the same") {
    for (struct <- Seq(false, true)) TestFiles.withTempDir("pq-duck") { dir =>
      val rows = FeedData.rows(Seq(6, 3))
      ParquetInputs.duckdbShards(dir.resolve("in"), rows, struct)
      checkReads(dir.resolve("in"), rows)
      val some = readAll(manifest(dir.resolve("in")).shards.get(0), Array(1, 5))
      assert(some.map(_.image.toSeq) == Seq(1, 5).map(j => rows(0)(j).image.toSeq))
    }
  }

  /** One shard's 12 rows (labels 0 to 11) of random images of `bytes` each, from `seed`. */
  private def randomRows(seed: Long, bytes: Int): Seq[Seq[Sample]] = {
    val rnd = new Random(seed)
    Seq((0 until 12).map(j => Sample(Array.fill(bytes)(rnd.nextInt().toByte), Int.box(j), "")))
  }

  test("reading some rows reads only the row groups and pages that hold them") {
    // random bytes: snappy cannot shrink them, so the bytes read show what was read
    val big = 1 << 20
    val rows = randomRows(3, big)
    // vectored reads (parquet-mr's default) bypass the stream statistics that measure the reads
    val streamed = new Configuration()
    streamed.setBoolean("parquet.hadoop.vectored.io.enabled", false)
    def bytesRead = FileSystem.getAllStatistics.asScala.filter(_.getScheme == "file").map(_.getBytesRead).sum
    def read(shard: Shard, positions: Array[Int]) = {
      val r = if (positions == null) ShardReader.open(shard, streamed, big64)
        else ShardReader.open(shard, streamed, big64, positions)
      try r.asScala.map(s => (s.label, s.image.toSeq)).toSeq finally r.close()
    }
    // one row group of 6 pages (page index: only 2 pages are read), then row groups of ~2 rows
    for ((rowsPerGroup, groups) <- Seq(100 -> 1, 4 -> 3)) TestFiles.withTempDir("pq-skip") { dir =>
      ParquetInputs.spark(spark, dir, rows, struct = false, rowsPerGroup = rowsPerGroup)
      val found = rowGroups(dir.resolve("shard-000.parquet").toString)
      assert(if (groups == 1) found == Seq(12L) else found.size >= groups, found)
      val shard = manifest(dir).shards.get(0)
      val before = bytesRead
      val got = read(shard, Array(1, 9))
      val some = bytesRead - before
      assert(got == Seq(1, 9).map(j => (Int.box(j), rows(0)(j).image.toSeq)))
      assert(some < 5L * big, s"read $some bytes: more than the two pages of 2 rows that hold them")
      val beforeAll = bytesRead
      assert(read(shard, null).size == 12)
      assert(bytesRead - beforeAll >= 12L * big)
    }
  }

  test("reading some rows with parquet-mr's vectored reads (its default) fetches only their pages, as a store counts it") {
    val big = 1 << 20
    val rows = randomRows(3, big)
    val counting = dev.spindle.spark.testkit.CountingFileSystem.register(new Configuration())
    def read(shard: Shard, positions: Array[Int]) = {
      val r = ShardReader.open(shard, counting, big64, positions)
      try r.asScala.map(s => (s.label, s.image.toSeq)).toSeq finally r.close()
    }
    for (rowsPerGroup <- Seq(100, 4)) TestFiles.withTempDir("pq-counted") { dir =>
      ParquetInputs.spark(spark, dir, rows, struct = false, rowsPerGroup = rowsPerGroup)
      val file = manifest(dir).shards.get(0)
      val shard = new Shard(dev.spindle.spark.testkit.CountingFileSystem.uri(dir.resolve("shard-000.parquet")),
        ShardFormat.PARQUET, file.bytes, file.modificationTime, file.samples, java.util.List.of(), file.columns)
      dev.spindle.spark.testkit.CountingFileSystem.reset()
      assert(read(shard, Array(1, 9)) == Seq(1, 9).map(j => (Int.box(j), rows(0)(j).image.toSeq)))
      val some = dev.spindle.spark.testkit.CountingFileSystem.bytesRead(".parquet")
      assert(some < 3L * big, s"$rowsPerGroup rows a group: read $some bytes for 2 rows of 1 MiB")
      dev.spindle.spark.testkit.CountingFileSystem.reset()
      assert(read(shard, (0 until 12).toArray).size == 12)
      assert(dev.spindle.spark.testkit.CountingFileSystem.bytesRead(".parquet") >= 12L * big)
    }
  }

  test("a null image or label is a quarantined sample keyed by file and row; limits apply") {
    TestFiles.withTempDir("pq-null") { dir =>
      val png = FeedData.png(1)
      val rows = Seq(Seq(Sample(png, 1, "a"), Sample(null, 2, "b"), Sample(png, null, "c"),
        Sample(Array.fill(3000)(1.toByte), 3, "d"), Sample(png, 7, "e")))
      ParquetInputs.spark(spark, dir, rows, struct = true)
      val got = readAll(manifest(dir).shards.get(0), null, new SampleLimits(2000, 5))
      assert(got.map(_.path) == Seq(
        "shard-000.parquet#0|null",
        "shard-000.parquet#1|the image is null (column 'image.bytes', row 1)",
        "shard-000.parquet#2|the label is null (column 'label', row 2)",
        "shard-000.parquet#3|image is 3000 bytes, over spark.spindle.maxSampleBytes=2000",
        "shard-000.parquet#4|label 7 (column 'label', row 4) is not below spark.spindle.numClasses=5"))
    }
  }

  test("a corrupt page (checksum) quarantines its row group's rows from there on; other groups read") {
    TestFiles.withTempDir("pq-page") { dir =>
      val rows = randomRows(5, 4096)
      ParquetInputs.spark(spark, dir, rows, struct = false, rowsPerGroup = 4)
      val file = dir.resolve("shard-000.parquet")
      val groups = rowGroups(file.toString)
      val shard = manifest(dir).shards.get(0)
      val bytes = Files.readAllBytes(file)
      val at = bytes.indexOfSlice(rows(0)(groups.head.toInt).image.slice(100, 116)) // first row of group 1
      assert(at > 0)
      bytes(at) = (bytes(at) ^ 1).toByte
      Files.write(file, bytes)
      val got = readAll(shard)
      val first = groups.head.toInt
      val end = first + groups(1).toInt
      assert(got.take(first).forall(_.path.endsWith("|null")))
      assert(got.slice(first, end).forall(_.path.contains(s"|row group 1 (rows $first–${end - 1}) cannot be ")),
        got.map(_.path))
      assert(got(first).path.contains("CRC checksum verification failed"), got(first).path)
      assert(got.drop(end).map(_.image.toSeq) == rows(0).drop(end).map(_.image.toSeq), "later row groups read")
    }
  }

  private def refusal(dir: Path, columns: ParquetColumns = ParquetColumns.DEFAULT): String =
    intercept[IOException](manifest(dir, columns)).getMessage

  /** A committed input of the parquet fuzz target. */
  private def found(name: String): Array[Byte] =
    Files.readAllBytes(Path.of(getClass.getResource("/fuzz/parquet/" + name).toURI))

  /** What `body` returns, and the bytes this thread allocated while it ran. */
  private def allocating[T](body: => T): (T, Long) = {
    val threads = ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
    val before = threads.getCurrentThreadAllocatedBytes
    val result = body
    (result, threads.getCurrentThreadAllocatedBytes - before)
  }

  /** `file` with its footer edited (re-encoded; the pages stay where they are). */
  private def withFooter(file: Array[Byte])(edit: FileMetaData => Unit): Array[Byte] = {
    val length = ByteBuffer.wrap(file, file.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
    val start = file.length - 8 - length
    val footer = Util.readFileMetaData(new ByteArrayInputStream(file, start, length))
    edit(footer)
    val encoded = new ByteArrayOutputStream()
    Util.writeFileMetaData(footer, encoded)
    val out = new ByteArrayOutputStream()
    out.write(file, 0, start)
    encoded.writeTo(out)
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(encoded.size).array)
    out.write("PAR1".getBytes(StandardCharsets.US_ASCII))
    out.toByteArray
  }

  /** `file` with the page header at byte `at` edited in place; the edit must keep its length. */
  private def withPageHeader(file: Array[Byte], at: Int)(edit: PageHeader => Unit): Array[Byte] = {
    val in = new ByteArrayInputStream(file, at, file.length - at)
    val header = Util.readPageHeader(in)
    val length = file.length - at - in.available
    edit(header)
    val encoded = new ByteArrayOutputStream()
    Util.writePageHeader(header, encoded)
    assert(encoded.size == length, s"the edited header is ${encoded.size} bytes, not $length")
    val out = file.clone()
    System.arraycopy(encoded.toByteArray, 0, out, at, length)
    out
  }

  /**
   * `file` with the data page header at byte `at` declaring `compressed` bytes, in a header of the
   * same length: its checksum dropped and its uncompressed size chosen to make up the difference.
   */
  private def withCompressedSize(file: Array[Byte], at: Int, compressed: Int): Array[Byte] = {
    val original = Util.readPageHeader(new ByteArrayInputStream(file, at, file.length - at))
    val length = { val b = new ByteArrayOutputStream(); Util.writePageHeader(original, b); b.size }
    val fits = for (crc <- Seq(true, false); u <- Seq(1, 100, 10000, 1000000, 100000000)) yield {
      val h = original.deepCopy()
      h.setCompressed_page_size(compressed)
      h.setUncompressed_page_size(u)
      if (!crc) h.unsetCrc()
      val b = new ByteArrayOutputStream()
      Util.writePageHeader(h, b)
      h -> b.size
    }
    val header = fits.find(_._2 == length).getOrElse(fail(s"no header of $length bytes: $fits"))._1
    withPageHeader(file, at) { h =>
      h.setCompressed_page_size(header.getCompressed_page_size)
      h.setUncompressed_page_size(header.getUncompressed_page_size)
      if (!header.isSetCrc) h.unsetCrc()
    }
  }

  /** A file of `length` bytes that ends with `tail`: zeros before it, never stored. */
  private final class TailFile(tail: Array[Byte], length: Long) extends InputFile {
    override def getLength: Long = length

    override def newStream(): SeekableInputStream = {
      var pos = 0L
      def at(p: Long): Int = { val t = p - (length - tail.length); if (t < 0) 0 else tail(t.toInt) & 0xFF }
      val bytes = new InputStream {
        override def read(): Int = if (pos >= length) -1 else { pos += 1; at(pos - 1) }
        override def read(b: Array[Byte], off: Int, len: Int): Int =
          if (len == 0) 0 else if (pos >= length) -1 else {
            val n = math.min(len.toLong, length - pos).toInt
            for (i <- 0 until n) b(off + i) = at(pos + i).toByte
            pos += n
            n
          }
      }
      new DelegatingSeekableInputStream(bytes) {
        override def getPos: Long = pos
        override def seek(p: Long): Unit = pos = p
      }
    }
  }

  test("a file without the image or label column is refused, naming it and its columns") {
    TestFiles.withTempDir("pq-cols") { dir =>
      val df = spark.createDataFrame(Seq(Row(Array[Byte](1), 1, "x")).asJava, StructType(Seq(
        StructField("picture", BinaryType), StructField("label", IntegerType), StructField("note", StringType))))
      ParquetInputs.write(spark, df, dir.resolve("a.parquet"))
      val e = refusal(dir)
      assert(e.contains("a.parquet has no column 'image' for the image (its columns: picture, label, note)"), e)
      assert(e.contains("spark.spindle.parquet.imageColumn (--image-column)"), e)
      assert(manifest(dir, new ParquetColumns("picture", "label")).totalSamples == 1L)
      val l = refusal(dir, new ParquetColumns("picture", "class"))
      assert(l.contains("has no column 'class' for the label (its columns: picture, label, note)"), l)
    }
  }

  test("columns of the wrong type are refused, naming file, column and type") {
    def refusedWith(fields: Seq[StructField], values: Seq[Any]): String = TestFiles.withTempDir("pq-type") { dir =>
      ParquetInputs.write(spark, spark.createDataFrame(Seq(Row.fromSeq(values)).asJava, StructType(fields)),
        dir.resolve("t.parquet"))
      refusal(dir)
    }
    val text = refusedWith(Seq(StructField("image", StringType), StructField("label", IntegerType)), Seq("x.jpg", 1))
    assert(text.contains("t.parquet: column 'image' has type 'optional binary image (STRING)'"), text)
    val float = refusedWith(Seq(StructField("image", BinaryType), StructField("label", DoubleType)), Seq(Array[Byte](1), 1.0))
    assert(float.contains("t.parquet: column 'label' has type 'optional double label'; labels must be integers"), float)
    val noBytes = refusedWith(Seq(StructField("image", StructType(Seq(StructField("path", StringType)))),
      StructField("label", LongType)), Seq(Row("p"), 1L))
    assert(noBytes.contains("column 'image' has type 'optional group image { optional binary path (STRING); }'"), noBytes)
    val list = refusedWith(Seq(StructField("image", BinaryType), StructField("label", ArrayType(IntegerType))),
      Seq(Array[Byte](1), Seq(1)))
    assert(list.contains("column 'label' has type 'optional group label (LIST)"), list)
  }

  test("a corrupt or truncated footer refuses the shard by name") {
    TestFiles.withTempDir("pq-footer") { dir =>
      ParquetInputs.spark(spark, dir, FeedData.rows(Seq(3, 3)), struct = false)
      val bad = dir.resolve("shard-001.parquet")
      val bytes = Files.readAllBytes(bad)
      Files.write(bad, bytes.take(bytes.length - 20))
      val e = refusal(dir)
      assert(e.startsWith("1 of 2 shards of file:" + dir + " cannot be used: file:" + bad
        + ": cannot read its Parquet footer ("), e)
      Files.write(bad, "not parquet at all".getBytes)
      assert(refusal(dir).contains(bad + ": cannot read its Parquet footer"))
    }
  }

  test("a footer declaring a negative row count refuses the shard by name") {
    // found by fuzzing (parquet): the count became the shard's sample count and failed the
    // listing with "Invalid sample count" instead of refusing the file
    TestFiles.withTempDir("pq-rows") { dir =>
      val found = Files.readAllBytes(java.nio.file.Path.of(
        getClass.getResource("/fuzz/parquet/found-negative-rows.parquet").toURI))
      Files.write(dir.resolve("bad.parquet"), found)
      val e = refusal(dir)
      assert(e.contains(s"file:$dir/bad.parquet: its Parquet footer declares -6 rows in row group"
        + " 0; the file is corrupt"), e)
    }
  }

  test("a row group whose pages run past the end of the file is damage, not a storage error") {
    // found by fuzzing (parquet): the EOFException failed the task as if the storage had failed
    TestFiles.withTempDir("pq-eof") { dir =>
      val found = Files.readAllBytes(java.nio.file.Path.of(
        getClass.getResource("/fuzz/parquet/found-page-size.parquet").toURI))
      Files.write(dir.resolve("short.parquet"), found)
      val got = readAll(manifest(dir).shards.get(0))
      assert(got.nonEmpty && got.forall(_.path.contains("row group 0 (rows 0–")) && got.forall(
        _.path.contains(" cannot be read: its pages run past the end of the file (")),
        got.map(_.path))
    }
  }

  test("a row group parquet-mr refuses while the storage is fine is damage, not a storage error") {
    // found by fuzzing (parquet): parquet-mr's IOExceptions of a page header it cannot decode and
    // of a chunk with more values than its footer says failed the task as if the storage had.
    // (found-value-count.parquet's footer itself declares 4 values for 5 rows: it is refused when
    // counted now; here its page declares 6 values where its footer declares 5 for 5 rows.)
    val moreValues = withPageHeader(found("groups-snappy.parquet"), 61)(
      _.getData_page_header.setNum_values(6))
    for ((file, bytes, reason) <- Seq(
        ("found-page-header.parquet", found("found-page-header.parquet"),
          "column 'label': the page at byte 61 cannot be decoded: its Thrift cannot be read within its"
            + " 44 bytes: Required field 'uncompressed_page_size'"),
        ("more-values.parquet", moreValues, "Expected 5 values in column chunk at "))) {
      TestFiles.withTempDir("pq-content") { dir =>
        Files.write(dir.resolve(file), bytes)
        val got = readAll(manifest(dir).shards.get(0))
        assert(got.size == 5 && got.forall(p => p.path.contains("|row group 0 (rows 0–4) cannot be read: ")
          && p.path.contains(reason)), got.map(_.path))
      }
    }
  }

  test("a footer whose Thrift declares a list longer than the footer is refused before it is allocated") {
    // found by fuzzing (parquet): a column chunk's list of encodings declaring over a billion
    // elements (of a type that takes no bytes) made parquet-mr's Thrift allocate them in a 378-byte
    // file: OutOfMemoryError
    TestFiles.withTempDir("pq-thrift") { dir =>
      Files.write(dir.resolve("list.parquet"), found("found-footer-list.parquet"))
      val (e, allocated) = allocating(refusal(dir))
      assert(allocated < (64L << 20), s"counting allocated $allocated bytes")
      assert(e.contains(s"file:$dir/list.parquet: cannot read its Parquet footer (its Thrift cannot"
        + " be read within its 252 bytes: Length exceeded max allowed: 1876950015); the file is not"
        + " Parquet, truncated or corrupt"), e)
    }
  }

  test("reading some rows, an offset index declaring more pages than it holds is not used") {
    // the bound on the footer's Thrift (found by fuzzing), for the offset index parquet-mr decodes
    // when some rows are read: its list of pages declaring 2,147,483,647 was allocated first
    TestFiles.withTempDir("pq-index") { dir =>
      val rows = FeedData.rows(Seq(12))
      ParquetInputs.spark(spark, dir, rows, struct = false, rowsPerGroup = 100)
      val file = dir.resolve("shard-000.parquet")
      val shard = manifest(dir).shards.get(0)
      val bytes = Files.readAllBytes(file)
      val footerStart = bytes.length - 8 - ByteBuffer.wrap(bytes, bytes.length - 8, 4)
        .order(ByteOrder.LITTLE_ENDIAN).getInt
      def label(m: FileMetaData) = m.getRow_groups.get(0).getColumns.asScala
        .find(_.getMeta_data.getPath_in_schema.asScala == Seq("label")).get
      val index = label(Util.readFileMetaData(new ByteArrayInputStream(bytes, footerStart,
        bytes.length - 8 - footerStart)))
      val at = index.getOffset_index_offset.toInt
      assert(at + index.getOffset_index_length == footerStart, "the label's offset index is last")
      assert(bytes(at) == 0x19 && (bytes(at + 1) & 0xF0) != 0xF0, "field 1, a list of under 15")
      // field 1, a list of 2,147,483,647 elements of type 0 (no bytes each), then the pages
      val claim = Array(0x19, 0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0x07).map(_.toByte)
      Files.write(file, withFooter(bytes.take(at) ++ claim ++ bytes.drop(at + 2))(
        m => label(m).setOffset_index_length(index.getOffset_index_length + claim.length - 2)))
      val (got, allocated) = allocating(readAll(shard, Array(1, 9)))
      assert(allocated < (64L << 20), s"reading allocated $allocated bytes")
      assert(got.map(_.label) == Seq(Int.box(1), Int.box(9)))
      assert(got.map(_.image.toSeq) == Seq(1, 9).map(j => rows(0)(j).image.toSeq))
    }
  }

  test("a footer claiming more rows than the file has bytes, or than an int counts, refuses the shard") {
    // found by fuzzing (parquet): a row group claiming 3,000,000,000 rows made as many quarantined
    // samples (reading took as long as the claim) and the manifest planned them all
    TestFiles.withTempDir("pq-claim") { dir =>
      Files.write(dir.resolve("claim.parquet"), found("found-row-count.parquet"))
      val e = refusal(dir)
      assert(e.contains(s"file:$dir/claim.parquet: its Parquet footer declares 3000000000 rows in"
        + " row group 0, more rows than the file has bytes (382); the file is corrupt"), e)
    }
    // positions within a shard are ints: a 3 GiB file (its footer at the end) of 2^31 rows
    val footer = withFooter(found("plain.parquet"))(_.getRow_groups.get(0).setNum_rows(1L << 31))
    val big = intercept[ShardRefusedException](ParquetFiles.open(new TailFile(footer, 3L << 30),
      ParquetFiles.options(conf, new HPath("file:/big.parquet"), limits), "big.parquet")).getMessage
    assert(big == "big.parquet: its Parquet footer declares 2147483648 rows; a shard holds at most"
      + " 2147483647 (split the file)", big)
  }

  test("a column chunk outside the file, or with other than one value per row, refuses the shard") {
    // the sibling of the page-header allocation below: parquet-mr allocates a chunk's declared
    // length before reading it, so a footer placing the label's chunk 1,000,000,000 bytes long in
    // a 393-byte file allocated that much
    for ((file, reason) <- Seq(
        "found-chunk-range.parquet" -> ("column 'label' of row group 0 declares 1000000000 bytes"
          + " from byte 67, past the end of the file (393 bytes); the file is corrupt"),
        "found-value-count.parquet" -> ("column 'label' of row group 0 declares 4 values for the"
          + " row group's 5 rows; the file is corrupt"))) {
      TestFiles.withTempDir("pq-chunk") { dir =>
        Files.write(dir.resolve(file), found(file))
        val e = refusal(dir)
        assert(e.contains(s"file:$dir/$file: $reason"), e)
      }
    }
    // nulls and repeated values are values too: DuckDB's and Spark's files pass
    TestFiles.withTempDir("pq-nulls") { dir =>
      val png = FeedData.png(3)
      val rows = Seq(Seq(Sample(png, 1, "a"), Sample(null, 1, "b"), Sample(png, null, "c"),
        Sample(png, 1, "d")))
      ParquetInputs.duckdbShards(dir.resolve("duck"), rows, struct = true)
      ParquetInputs.spark(spark, dir.resolve("spark"), rows, struct = false)
      for (in <- Seq("duck", "spark")) {
        val got = readAll(manifest(dir.resolve(in)).shards.get(0))
        assert(got.map(_.path.dropWhile(_ != '|')) == Seq("|null",
          s"|the image is null (column '${if (in == "duck") "image.bytes" else "image"}', row 1)",
          "|the label is null (column 'label', row 2)", "|null"), in)
      }
    }
  }

  test("a page declaring more bytes than its column chunk holds is damage, and is not allocated") {
    // found by fuzzing (parquet): for the last column chunk of a read, parquet-mr's
    // WorkaroundChunk (for chunks written too short before parquet-mr 1.2.9) allocated what a page
    // header declares (2,000,000,000 bytes in this 394-byte file) less what the chunk holds,
    // before reading: OutOfMemoryError
    TestFiles.withTempDir("pq-alloc") { dir =>
      Files.write(dir.resolve("alloc.parquet"), found("found-workaround-chunk.parquet"))
      val shard = manifest(dir).shards.get(0)
      val (got, allocated) = allocating(readAll(shard))
      assert(allocated < (64L << 20), s"reading allocated $allocated bytes")
      assert(got.size == 5 && got.forall(_.path.contains("|row group 0 (rows 0–4) cannot be read: "
        + "org.apache.parquet.io.ParquetDecodingException: column 'label': the page at byte 67"
        + " declares 2000000000 bytes, past its column chunk's end (byte 134)")), got.map(_.path))
    }
  }

  test("reading some rows, a page that is not what the offset index says is checked as a whole read") {
    // the filtered read (offset index) of the allocation above: the label's first data page
    // declares 2,000,000,000 bytes; its header keeps its length, so the offset index still
    // places every page
    TestFiles.withTempDir("pq-alloc-some") { dir =>
      val rows = randomRows(7, 4096)
      ParquetInputs.spark(spark, dir, rows, struct = false, rowsPerGroup = 100)
      val file = dir.resolve("shard-000.parquet")
      val first = {
        val r = ParquetFileReader.open(HadoopInputFile.fromPath(new HPath(file.toString), conf))
        try {
          val label = r.getRowGroups.get(0).getColumns.asScala.find(_.getPath.toDotString == "label").get
          r.readOffsetIndex(label).getOffset(0)
        } finally r.close()
      }
      val shard = manifest(dir).shards.get(0)
      assert(readAll(shard, Array(1)).map(_.label) == Seq(Int.box(1)))
      Files.write(file, withCompressedSize(Files.readAllBytes(file), first.toInt, 2000000000))
      val (got, allocated) = allocating(readAll(shard, Array(1)))
      assert(allocated < (64L << 20), s"reading allocated $allocated bytes")
      assert(got.size == 1 && got.head.path.contains(s"|row group 0 (rows 0–11) cannot be read: "
        + s"org.apache.parquet.io.ParquetDecodingException: column 'label': the page at byte $first"
        + " declares 2000000000 bytes, past its column chunk's end"), got.map(_.path))
    }
  }

  test("a page declaring more than the page bound is refused before it is allocated") {
    // found by fuzzing (parquet, in memory: FuzzSuite replays the input): parquet-mr allocated
    // the page's declared uncompressed size first and threw OutOfMemoryError
    val codecs = PageSizeLimit.wrap(HadoopCodecs.newFactory(0), 1 << 20)
    val snappy = codecs.getDecompressor(CompressionCodecName.SNAPPY)
    val e = intercept[ParquetDecodingException](
      snappy.decompress(BytesInput.from(new Array[Byte](8)), Int.MaxValue))
    assert(e.getMessage == "a SNAPPY page declares 2147483647 bytes uncompressed (at most"
      + " 268435456 are read)")
    val bound = PageSizeLimit.wrap(HadoopCodecs.newFactory(0), 200 << 20)
      .getDecompressor(CompressionCodecName.GZIP)
    assert(intercept[ParquetDecodingException](bound.decompress(BytesInput.empty(), 419430401))
      .getMessage.endsWith("(at most 419430400 are read)")) // twice a sample of 200 MiB
    val data = BytesInput.from("pixels".getBytes)
    val packed = codecs.getCompressor(CompressionCodecName.GZIP).compress(data)
    assert(codecs.getDecompressor(CompressionCodecName.GZIP).decompress(packed, 6).toByteArray
      .sameElements("pixels".getBytes))
  }

  test("DuckDB integer types: unsigned labels read as their value; too large ones are quarantined") {
    TestFiles.withTempDir("pq-uint") { dir =>
      Files.createDirectories(dir.resolve("in"))
      Files.write(dir.resolve("img.bin"), FeedData.png(2))
      ParquetInputs.duckdb(
        s"""COPY (SELECT b.content AS image, v.label FROM read_blob('$dir/img.bin') b,
           |  (VALUES (200::UTINYINT), (7::UTINYINT)) v(label)) TO '$dir/in/u8.parquet' (FORMAT parquet)""".stripMargin,
        s"""COPY (SELECT b.content AS image, v.label FROM read_blob('$dir/img.bin') b,
           |  (VALUES (18446744073709551615::UBIGINT), (3::UBIGINT)) v(label))
           |  TO '$dir/in/u64.parquet' (FORMAT parquet)""".stripMargin,
        s"""COPY (SELECT b.content AS image, -4::SMALLINT AS label FROM read_blob('$dir/img.bin') b)
           |  TO '$dir/in/i16.parquet' (FORMAT parquet)""".stripMargin)
      val m = manifest(dir.resolve("in"))
      val got = m.shards.asScala.map(s => new HPath(s.uri).getName -> readAll(s)).toMap
      assert(got("u8.parquet").map(_.label) == Seq(Int.box(200), Int.box(7)))
      assert(got("u64.parquet").map(_.path.dropWhile(_ != '|')) ==
        Seq("|label 18446744073709551615 (column 'label', row 0) is over 2147483647, the largest int32 label", "|null"))
      assert(got("i16.parquet").map(_.path.dropWhile(_ != '|')) == Seq("|label -4 (column 'label', row 0) is negative"))
      ParquetInputs.duckdb(s"COPY (SELECT 'x'::BLOB AS image, 1.5::FLOAT AS label) TO '$dir/in/f.parquet' (FORMAT parquet)")
      assert(refusal(dir.resolve("in")).contains("f.parquet: column 'label' has type 'optional float label'"))
    }
  }
}
