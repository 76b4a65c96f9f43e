"""min_runtime.py's choice of entries (bin/gpu-bundle's Spark runtime): the classes a run loaded,
their small packages whole, with --nested every class nested in their top-level classes, with
--whole-package the named packages whole, with --whole-jar a jar whole, and nothing else."""
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "min_runtime.py")

BIG = ["big/K%03d.class" % i for i in range(5)]  # a package over --whole (3)
CLASSES = ["a/Outer.class", "a/Outer$Inner.class", "a/Outer$Inner$Deep.class",
           "a/Outer$$anon$2.class", "a/Other.class", "a/Other$1.class",
           "s/core/Loaded.class", "s/core/Loaded$.class", "s/core/Unloaded.class",
           "s/core/Unloaded$Nested.class", "s/core/More.class", "s/core/Extra.class"] + BIG


class MinRuntimeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.jar = os.path.join(d, "lib.jar")
        self.cli = os.path.join(d, "picocli-4.7.7.jar")
        with zipfile.ZipFile(self.jar, "w") as z:
            for c in CLASSES:
                z.writestr(c, b"\xca\xfe")
            z.writestr("META-INF/services/x.Provider", "a.Outer\ngone.Missing\n")
        with zipfile.ZipFile(self.cli, "w") as z:
            z.writestr("picocli/CommandLine.class", b"\xca\xfe")
            z.writestr("picocli/CommandLine$Interpreter$3.class", b"\xca\xfe")
        loaded = ["a.Outer$Inner", "s.core.Loaded", "big.K001"]
        self.log = os.path.join(d, "classes.log")
        with open(self.log, "w") as f:
            for c in loaded:
                f.write("[0.1s][info][class,load] %s source: jar:file:%s!/\n" % (c, self.jar))

    def tearDown(self):
        self.dir.cleanup()

    def run_script(self, *extra):
        out = os.path.join(self.dir.name, "out-%d" % len(extra))
        subprocess.run([sys.executable, SCRIPT, "--log", self.log, "--classpath",
                        self.jar + ":" + self.cli, "--out", out, "--whole", "3"] + list(extra),
                       check=True, capture_output=True)
        got = set()
        for root, _, files in os.walk(out):
            got |= {os.path.relpath(os.path.join(root, f), out) for f in files}
        return got

    def test_loaded_classes_and_their_small_packages(self):
        got = self.run_script()
        # a/ has 6 classes (over 3): only what was loaded; s/core/ has 6: the same; big/ 5
        self.assertEqual({c for c in got if c.endswith(".class")},
                         {"a/Outer$Inner.class", "s/core/Loaded.class", "big/K001.class"})
        self.assertNotIn("picocli/CommandLine.class", got, "a jar nothing was loaded from")

    def test_nested_takes_every_class_of_a_loaded_class_s_top_level_class(self):
        got = self.run_script("--nested")
        self.assertEqual({c for c in got if c.startswith("a/")},
                         {"a/Outer$Inner.class", "a/Outer$Inner$Deep.class",
                          "a/Outer$$anon$2.class"})
        self.assertIn("s/core/Loaded$.class", got, "a Scala object beside its loaded class")
        self.assertNotIn("a/Outer.class", got, "the top-level class itself only if loaded")
        self.assertNotIn("s/core/Unloaded$Nested.class", got)
        self.assertNotIn("a/Other$1.class", got)

    def test_whole_package_and_whole_jar(self):
        got = self.run_script("--whole-package", "^s/core$", "--whole-jar", "/picocli-[^/]*\\.jar$")
        self.assertTrue({"s/core/Unloaded.class", "s/core/Unloaded$Nested.class",
                         "s/core/More.class", "s/core/Extra.class"} <= got)
        self.assertNotIn("a/Other.class", got, "other packages as before")
        self.assertTrue({"picocli/CommandLine.class", "picocli/CommandLine$Interpreter$3.class"}
                        <= got, "a jar taken whole, though nothing was loaded from it")

    def test_services_keep_only_providers_in_the_runtime(self):
        out = os.path.join(self.dir.name, "svc")
        subprocess.run([sys.executable, SCRIPT, "--log", self.log, "--classpath", self.jar,
                        "--out", out, "--whole", "3", "--nested"], check=True, capture_output=True)
        # a.Outer itself was not loaded (only a class nested in it): the provider is dropped
        self.assertFalse(os.path.exists(os.path.join(out, "META-INF/services/x.Provider")))


if __name__ == "__main__":
    unittest.main()
