package dev.spindle.spark.batch

import scala.jdk.CollectionConverters._

import dev.spindle.spark.config.{Settings, SpindleConfig}
import org.scalatest.funsuite.AnyFunSuite

/** The declaration of a job's fields: `spark.spindle.fields`, its defaults and its errors. */
class FieldSpecSuite extends AnyFunSuite {
  private def parse(s: String) = FieldSet.parse(s).declared.asScala.toSeq

  test("NAME=SOURCE[:TYPE], types by WebDataset's conventions when not written") {
    val f = parse("image=jpg, caption=txt ,label=cls,meta=json,seg=seg.png:bytes,tokens=tok:list< int32 >,x=npy,id=id")
    assert(f.map(_.toString) == Seq("image=jpg:image", "caption=txt:string", "label=cls:int64",
      "meta=json:string", "seg=seg.png:bytes", "tokens=tok:list<int32>", "x=npy:bytes", "id=id:int64"))
    val set = FieldSet.parse("image=jpg,caption=txt,label=cls")
    assert(set.extras.asScala.map(_.name) == Seq("caption") && set.labelled && set.image.source == "jpg")
    assert(FieldSet.parse("").isEmpty && FieldSet.parse("  ").declared.isEmpty && FieldSet.NONE.labelled)
    assert(!FieldSet.parse("image=png").labelled)
    assert(FieldSpec.defaultType("seg.png") == FieldType.IMAGE && FieldSpec.defaultType("TXT") == FieldType.STRING)
  }

  test("an ill-formed entry is an error naming the key, the entry and the valid types") {
    def error(s: String): String = intercept[IllegalArgumentException](
      Settings.read(java.util.Map.of("spark.spindle.fields", s))).getMessage
    val types = "valid types: image, int32, int64, float32, float64, string, bytes, list<int32>, list<int64>, list<float32>"
    assert(error("image=jpg,caption=txt:strin") ==
      s"Invalid value for spark.spindle.fields: 'image=jpg,caption=txt:strin' (entry 'caption=txt:strin': unknown type 'strin' ($types))")
    assert(error("image=jpg,caption").contains("entry 'caption': expected NAME=SOURCE[:TYPE]"))
    assert(error("image=jpg,caption=").contains("entry 'caption=': expected NAME=SOURCE[:TYPE] with a source"))
    assert(error("image=jpg,a=txt,a=cls").contains("entry 'a=cls': field 'a' is declared twice"))
    assert(error("image=jpg,key=txt").contains("entry 'key=txt': 'key' is a column every row already has"))
    assert(error("image=jpg,2x=txt").contains("the name '2x' is not a column name"))
    assert(error("image=txt:string").contains("the field 'image' is the image column: its type must be image, not string"))
    assert(error("image=jpg,thumb=png").contains("field 'thumb' is of type image: only the field named 'image' may be"))
    assert(error("image=jpg,label=txt:string").contains("its type must be int32 or int64, not string"))
    assert(Settings.read(java.util.Map.of()).get(SpindleConfig.FIELDS).isEmpty)
    assert(Settings.read(java.util.Map.of()).get(SpindleConfig.FIELDS_MAX_BYTES) == 65536)
  }

  test("a declaration without an image is a sample without one: no image, no label, its extra fields") {
    val text = Settings.read(java.util.Map.of("spark.spindle.fields", "text=txt,tokens=tok:list<int32>")).get(SpindleConfig.FIELDS)
    assert(!text.hasImage && !text.labelled && text.extras.asScala.map(_.name) == Seq("text", "tokens"))
    assert(FieldSet.NONE.hasImage && FieldSet.parse("image=png").hasImage)
  }
}
