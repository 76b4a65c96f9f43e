package dev.spindle

import java.net.URL

import com.tngtech.archunit.core.domain.{JavaClass, JavaClasses}
import com.tngtech.archunit.core.importer.ClassFileImporter
import com.tngtech.archunit.lang.ArchRule
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses
import com.tngtech.archunit.library.dependencies.{SliceAssignment, SliceIdentifier}
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices
import org.scalatest.funsuite.AnyFunSuite

/**
 * How Spindle's packages may depend on each other, checked on the compiled main classes of
 * loader-spark and loader-gpu (bytecode, as `jdeps -verbose:package` sees them): no cycle among
 * dev.spindle packages, and no package of the flow (shard, manifest, plan, pipeline, image, batch,
 * samples, the sinks, the jobs, metrics, progress, config, and loader-gpu's) depends on an entry
 * point (`cli`, `sql`, `example`, the `dev.spindle` API), so entry points depend only downward. A
 * failure names the packages of each cycle, or both classes of each upward edge, with the member
 * and source line that makes it. The package map: loader-spark/README.md.
 */
class ArchitectureSuite extends AnyFunSuite {
  import ArchitectureSuite._

  private lazy val product: JavaClasses = productClasses()

  test("the checks see the product: the API, the Spark loader's and the GPU feeder's classes") {
    assert(product.contain(classOf[Spindle]))
    assert(product.contain(classOf[dev.spindle.spark.cli.SpindleMain]))
    assert(product.contain(classOf[dev.spindle.gpu.feed.GpuFeeder]))
    assert(!product.containPackage("dev.spindle.archfixture"), "main classes only, not tests")
  }

  test("no cycle among dev.spindle packages") {
    noPackageCycles.check(product)
  }

  test("the flow depends on no entry point: nothing below cli, sql, example and the API imports them") {
    noUpwardImports(EntryPoints).check(product)
  }

  test("only dev.spindle.gpu.cuda references JCuda (loading it without a driver throws)") {
    noClasses().that().resideOutsideOfPackage("dev.spindle.gpu.cuda")
      .should().dependOnClassesThat().resideInAPackage("jcuda..")
      .check(product)
  }

  test("a package cycle fails the check, naming its packages and the classes of each edge") {
    val fixture = new ClassFileImporter().importPackages("dev.spindle.archfixture.cycle")
    val e = intercept[AssertionError](noPackageCycles.check(fixture))
    val msg = e.getMessage
    assert(msg.contains("Cycle detected"), msg)
    Seq("dev.spindle.archfixture.cycle.a", "dev.spindle.archfixture.cycle.b",
      "dev.spindle.archfixture.cycle.a.Left", "dev.spindle.archfixture.cycle.b.Right")
      .foreach(name => assert(msg.contains(name), s"$name in: $msg"))
  }

  test("an import from the flow into an entry point fails the check, naming both classes") {
    val fixture = new ClassFileImporter().importPackages("dev.spindle.archfixture.upward")
    val e = intercept[AssertionError](
      noUpwardImports(Seq("dev.spindle.archfixture.upward.entry")).check(fixture))
    val msg = e.getMessage
    Seq("dev.spindle.archfixture.upward.flow.Reader", "dev.spindle.archfixture.upward.entry.Command")
      .foreach(name => assert(msg.contains(name), s"$name in: $msg"))
  }
}

object ArchitectureSuite {

  /** The entry points: they may import anything below them, and nothing may import them. */
  val EntryPoints: Seq[String] =
    Seq("dev.spindle", "dev.spindle.spark.cli", "dev.spindle.spark.sql", "dev.spindle.spark.example")

  /** Each dev.spindle package is a slice of its own (subpackages are slices too). */
  private object ByPackage extends SliceAssignment {
    override def getIdentifierOf(c: JavaClass): SliceIdentifier = {
      val p = c.getPackageName
      if (p == "dev.spindle" || p.startsWith("dev.spindle.")) SliceIdentifier.of(p)
      else SliceIdentifier.ignore()
    }

    override def getDescription: String = "dev.spindle packages"
  }

  val noPackageCycles: ArchRule = slices().assignedFrom(ByPackage).should().beFreeOfCycles()

  /** No class of a dev.spindle package other than `entries` depends on a class in `entries`. */
  def noUpwardImports(entries: Seq[String]): ArchRule =
    noClasses().that().resideInAPackage("dev.spindle..").and().resideOutsideOfPackages(entries: _*)
      .should().dependOnClassesThat().resideInAnyPackage(entries: _*)
      .because("entry points depend only downward along the flow")

  /** The main classes of loader-spark and loader-gpu, wherever the test's classpath has them. */
  def productClasses(): JavaClasses = {
    def location(c: Class[_]): URL = c.getProtectionDomain.getCodeSource.getLocation
    new ClassFileImporter().importUrls(
      java.util.List.of(location(classOf[Spindle]), location(classOf[dev.spindle.gpu.feed.GpuFeeder])))
  }
}
