package dev.spindle.gpu.feed

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import dev.spindle.gpu.device.{Device, HostDevice, NormalizeSpec, SharedMemoryDevice}
import dev.spindle.gpu.feed.TestBatches._
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** Extra fields in ring slots: layout, every value through the device, and the guards. */
class FieldSlotsSuite extends AnyFunSuite {
  private val Rows = 4
  private val ImageBytes = 12
  private val T = Duration.ofSeconds(10)
  private val spec = NormalizeSpec.raw(ImageBytes, 1, 1)
  private def config(fields: Seq[SlotField]) =
    FeederConfig.of(Rows, spec).withSlots(3).withFields(fields.asJava)

  /** A host device that records the size of every allocation. */
  private final class Recording extends Device {
    private val inner = new HostDevice()
    val host = Seq.newBuilder[Long]
    val device = Seq.newBuilder[Long]
    override def kind() = inner.kind()
    override def ordinal() = inner.ordinal()
    override def description() = "recording " + inner.description()
    override def allocateHost(bytes: Long) = { host += bytes; inner.allocateHost(bytes) }
    override def allocateDevice(bytes: Long) = { device += bytes; inner.allocateDevice(bytes) }
    override def openStream(events: Int) = inner.openStream(events)
    override def copyToHost(src: dev.spindle.gpu.device.DeviceBuffer, off: Long, dst: ByteBuffer): Unit =
      inner.copyToHost(src, off, dst)
    override def close(): Unit = inner.close()
  }

  private def align(n: Long) = SlotArena.align(n)

  test("without extra fields a slot is laid out as before: images, labels, nothing more") {
    val d = new Recording
    GpuFeeder.open(d, config(Seq.empty)).close()
    val perSlot = align(Rows * ImageBytes) + align(8L * Rows)
    assert(d.device.result() == Seq(align(8L) + 3 * perSlot)) // table, then the slots
    assert(d.host.result() == Seq(align(8L), 3 * perSlot))
  }

  test("each extra field gets its own region in every slot: values, and offsets for rows + 1") {
    val d = new Recording
    GpuFeeder.open(d, config(TestFields.Slots)).close()
    val fields = align(8L * Rows) + align(4L * Rows) +
      3 * (align(Rows * TestFields.MaxBytes.toLong) + align(4L * (Rows + 1)))
    val perSlot = align(Rows * ImageBytes) + align(8L * Rows) + fields
    assert(d.device.result() == Seq(align(8L) + 3 * perSlot))
    assert(d.host.result() == Seq(align(8L), 3 * perSlot))
  }

  for ((name, device) <- Seq[(String, () => Device)](("host", () => new HostDevice()),
      ("shared memory", () => new SharedMemoryDevice()))) {
    test(s"every value of every field reaches the device exactly ($name)") {
      withAllocator { alloc =>
        val feeder = GpuFeeder.open(device(), config(TestFields.Slots))
        try {
          for (batch <- 0L until 7L) { // more batches than slots: regions are reused
            val root = TestFields.append(alloc, build(alloc, batch, Rows, ImageBytes), batch)
            try feeder.offer(root, T) finally root.close()
            val b = feeder.next(T)
            try assertFields(b, batch) finally b.close()
          }
        } finally feeder.close()
      }
    }
  }

  private def assertFields(b: DeviceBatch, batch: Long): Unit = {
    assert(b.fields().asScala.map(_.name) == Seq("id", "score", "caption", "tokens", "blob"))
    val rows = 0 until Rows
    assert(longs(copy(b, 0), Rows) == rows.map(TestFields.id(batch, _)))
    val scores = copy(b, 1)
    assert(rows.map(r => scores.getFloat(4 * r)) == rows.map(TestFields.score(batch, _)))
    assert(b.fieldOffsetsBytes(0) == 0 && b.fieldValuesBytes(1) == 4L * Rows)
    assert(variable(b, 2, 1).map(v => new String(v.map(_.toByte).toArray, UTF_8)) ==
      rows.map(TestFields.caption(batch, _)))
    assert(variable(b, 3, 4) == rows.map(TestFields.tokens(batch, _).map(_.toLong)))
    assert(variable(b, 4, 1).map(_.map(_.toByte)) == rows.map(TestFields.blob(batch, _)))
    intercept[IllegalStateException](b.fieldOffsetsPointer(0))
  }

  private def copy(b: DeviceBatch, i: Int): ByteBuffer = {
    val dst = ByteBuffer.allocateDirect((b.fieldValuesBytes(i) + b.fieldOffsetsBytes(i)).toInt + 1)
      .order(ByteOrder.LITTLE_ENDIAN)
    b.copyFieldTo(i, dst)
    dst
  }

  private def longs(buf: ByteBuffer, n: Int): Seq[Long] = (0 until n).map(r => buf.getLong(8 * r))

  /** Field `i`'s rows (elements of `width` bytes, as signed values) from its values and offsets. */
  private def variable(b: DeviceBatch, i: Int, width: Int): Seq[Seq[Long]] = {
    val buf = copy(b, i)
    val values = b.fieldValuesBytes(i).toInt
    val offsets = (0 to Rows).map(r => buf.getInt(values + 4 * r))
    assert(offsets.head == 0 && offsets.last * width == values)
    (0 until Rows).map(r => (offsets(r) until offsets(r + 1)).map { e =>
      if (width == 4) buf.getInt(4 * e).toLong else buf.get(e).toLong
    })
  }

  test("a value over its field's reserved bytes is refused naming field, key and sizes; the ring goes on") {
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(new HostDevice(), config(TestFields.Slots))
      try {
        val long = (b: Long, r: Int) => if (r == 2) "y" * (TestFields.MaxBytes + 1) else "ok"
        val bad = TestFields.append(alloc, build(alloc, 0, Rows, ImageBytes), 0, long)
        val e = try intercept[IllegalArgumentException](feeder.offer(bad, T)) finally bad.close()
        assert(e.getMessage == "Invalid batch: field 'caption' of row 2 (key 'shard-0/sample-é-2') "
          + "holds 65 bytes; the feeder reserves 64 bytes a row for it (spark.spindle.fields.maxBytes)")
        val good = TestFields.append(alloc, build(alloc, 1, Rows, ImageBytes), 1)
        try feeder.offer(good, T) finally good.close()
        val b = feeder.next(T)
        try assertFields(b, 1) finally b.close()
      } finally feeder.close()
    }
  }

  test("a batch whose extra columns are not the feeder's fields is refused, naming both") {
    withAllocator { alloc =>
      val plain = GpuFeeder.open(new HostDevice(), config(Seq.empty))
      val typed = GpuFeeder.open(new HostDevice(), config(
        TestFields.Slots.updated(0, SlotField.fixed("id", SlotField.Dtype.INT32))))
      try {
        val root = TestFields.append(alloc, build(alloc, 0, Rows, ImageBytes), 0)
        try {
          val e = intercept[IllegalArgumentException](plain.offer(root, T))
          assert(e.getMessage == "Invalid batch: extra columns [id, score, caption, tokens, blob] "
            + "(the feeder was created with the fields [])")
          val t = intercept[IllegalArgumentException](typed.offer(root, T))
          assert(t.getMessage == "Invalid batch: column 'id' is Int(64, true) (FIXED INT64; the "
            + "feeder's field is FIXED INT32)")
        } finally root.close()
        val core = build(alloc, 0, Rows, ImageBytes)
        try {
          val m = intercept[IllegalArgumentException](typed.offer(core, T))
          assert(m.getMessage.startsWith("Invalid batch: extra columns [] (the feeder was created "
            + "with the fields [id, score"))
        } finally core.close()
      } finally { plain.close(); typed.close() }
    }
  }

  test("a feeder with extra fields takes Arrow batches only: claiming a slot is refused") {
    val feeder = GpuFeeder.open(new HostDevice(), config(TestFields.Slots))
    try {
      val e = intercept[IllegalStateException](feeder.claimSlot(T))
      assert(e.getMessage.endsWith("has extra fields [id, score, caption, tokens, blob]: offer its "
        + "batches as Arrow batches (a SlotWriter writes no fields)"))
    } finally feeder.close()
  }

  test("Arrow columns map to slot fields; the core columns are not extra; other types are refused") {
    def f(name: String, t: ArrowType, children: Field*) =
      new Field(name, FieldType.nullable(t), children.asJava)
    val i32 = new ArrowType.Int(32, true)
    val schema = new Schema(Seq(f("image", new ArrowType.FixedSizeList(3)), f("label", i32),
      f("key", ArrowType.Utf8.INSTANCE), f("index", new ArrowType.Int(64, true)),
      f("n", i32), f("x", new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)),
      f("t", ArrowType.Utf8.INSTANCE), f("b", ArrowType.Binary.INSTANCE),
      f("ids", ArrowType.List.INSTANCE, f("item", new ArrowType.Int(64, true)))).asJava)
    val got = SlotField.extras(schema, 100).asScala
    assert(got == Seq(SlotField.fixed("n", SlotField.Dtype.INT32),
      SlotField.fixed("x", SlotField.Dtype.FLOAT64),
      new SlotField("t", SlotField.Dtype.UINT8, SlotField.Kind.STRING, 100),
      new SlotField("b", SlotField.Dtype.UINT8, SlotField.Kind.LIST, 100),
      new SlotField("ids", SlotField.Dtype.INT64, SlotField.Kind.LIST, 100)))
    assert(SlotField.extras(new Schema(schema.getFields.subList(0, 4)), 100).isEmpty)
    val e = intercept[IllegalArgumentException](SlotField.of(f("u", new ArrowType.Int(16, true)), 100))
    assert(e.getMessage.startsWith("Invalid field 'u': Arrow type u: Int(16, true) cannot be fed"))
    intercept[IllegalArgumentException](SlotField.fixed("label", SlotField.Dtype.INT64))
    val twice = intercept[IllegalArgumentException](config(Seq(TestFields.Slots(0), TestFields.Slots(0))))
    assert(twice.getMessage == "Invalid fields: 'id' twice")
  }

  /** `root` without its `image` column (a batch of a job whose samples have no image). */
  private def withoutImage(root: org.apache.arrow.vector.VectorSchemaRoot) = {
    val vectors = root.getFieldVectors.asScala.toSeq.filter(_.getName != "image")
    val out = new org.apache.arrow.vector.VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava)
    out.setRowCount(root.getRowCount)
    out
  }

  test("a feeder without images has no image region in its slots: labels and fields only") {
    val d = new Recording
    GpuFeeder.open(d, config(TestFields.Slots).withoutImages()).close()
    val fields = align(8L * Rows) + align(4L * Rows) +
      3 * (align(Rows * TestFields.MaxBytes.toLong) + align(4L * (Rows + 1)))
    val perSlot = align(8L * Rows) + fields
    assert(d.device.result() == Seq(align(8L) + 3 * perSlot))
    assert(d.host.result() == Seq(align(8L), 3 * perSlot))
  }

  for ((name, device) <- Seq[(String, () => Device)](("host", () => new HostDevice()),
      ("shared memory", () => new SharedMemoryDevice()))) {
    test(s"a batch without images carries labels, keys, indices and every field ($name)") {
      withAllocator { alloc =>
        val feeder = GpuFeeder.open(device(), config(TestFields.Slots).withoutImages())
        try {
          for (batch <- 0L until 5L) {
            val full = TestFields.append(alloc, build(alloc, batch, Rows, ImageBytes), batch)
            try feeder.offer(withoutImage(full), T) finally full.close()
            val b = feeder.next(T)
            try {
              assert(b.shape().isEmpty && b.imageBytes() == 0)
              val labels = ByteBuffer.allocateDirect(8 * Rows).order(ByteOrder.LITTLE_ENDIAN)
              b.copyLabelsTo(labels)
              assert(longs(labels, Rows) == (0 until Rows).map(label(batch, _)))
              assert((0 until Rows).map(b.key) == (0 until Rows).map(key(batch, _)))
              assert((0 until Rows).map(b.label) == (0 until Rows).map(label(batch, _)))
              assertFields(b, batch)
            } finally b.close()
          }
        } finally feeder.close()
      }
    }
  }

  test("a feeder without images refuses an image column; one with images needs it") {
    withAllocator { alloc =>
      val none = GpuFeeder.open(new HostDevice(), config(Seq.empty).withoutImages())
      val usual = GpuFeeder.open(new HostDevice(), config(Seq.empty))
      try {
        val root = build(alloc, 0, Rows, ImageBytes)
        try {
          val e = intercept[IllegalArgumentException](none.offer(root, T))
          assert(e.getMessage == "Invalid batch: column 'image' given to a feeder without images "
            + "(its samples have no image; drop the column or declare the image)")
          val bare = withoutImage(root)
          val m = intercept[IllegalArgumentException](usual.offer(bare, T))
          assert(m.getMessage == "Invalid batch: no column 'image' (columns: [label, key, index])")
          none.offer(bare, T)
          val b = none.next(T)
          try assert(b.rows() == Rows && b.shape().isEmpty) finally b.close()
        } finally root.close()
      } finally { none.close(); usual.close() }
    }
  }
}
