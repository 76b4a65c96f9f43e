"""``python -m spindle_bridge.launch``: exit statuses, argv, its own process group, and a group
that dies with the launcher's parent."""
import json
import os
import select
import subprocess
import sys
import tempfile
import time
import unittest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def alive(pid):
    """True while ``pid`` runs (a zombie, killed but not reaped yet, does not count)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class LaunchTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def script(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def launch(self, *args):
        env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "spindle_bridge.launch", *args], env=env,
                              cwd=self.dir, capture_output=True, text=True, timeout=60)

    def test_the_script_runs_as_main_with_its_argv_path_and_own_process_group(self):
        self.script("helper.py", "VALUE = 'from the script folder'\n")
        s = self.script("train.py", "import os, sys, helper\n"
                        "print(__name__, sys.argv, sys.path[0] == os.path.dirname("
                        "os.path.abspath(__file__)), helper.VALUE)\n"
                        "print(os.getpgrp() == os.getpid(), os.getpgrp() != os.getpgid("
                        "os.getppid()))\n")
        r = self.launch(s, "--lr", "0.1", "x y")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout.splitlines(), [
            "__main__ %r True from the script folder" % [s, "--lr", "0.1", "x y"], "True True"])

    def test_a_warm_start_imports_first_then_runs_the_script_its_first_line_names(self):
        s = self.script("train.py", "import os, sys\n"
                        "print(__name__, sys.argv, os.environ['RANK'], 'torch' in sys.modules,"
                        " os.getpgrp() == os.getpid())\n")
        env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.Popen([sys.executable, "-u", "-m", "spindle_bridge.launch", "--warm"],
                             env=env, cwd=self.dir, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline(), "spindle-warm: ready\n")  # before any input
            out, err = p.communicate(json.dumps({"env": {"RANK": "3"},
                                                 "argv": [s, "--lr", "0.1"]}) + "\n", 60)
        finally:
            p.kill()
        self.assertEqual((p.returncode, err), (0, ""))
        self.assertEqual(out.splitlines(), ["__main__ %r 3 True True" % [s, "--lr", "0.1"]])
        r = subprocess.run([sys.executable, "-m", "spindle_bridge.launch", "--warm"], env=env,
                           input="", capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "spindle-warm: ready\n", ""),
                         "no start line: it was not needed")

    def test_the_exit_status_is_the_scripts(self):
        self.assertEqual(self.launch(self.script("ok.py", "pass\n")).returncode, 0)
        r = self.launch(self.script("exit.py", "import sys\nsys.exit(7)\n"))
        self.assertEqual(r.returncode, 7)
        r = self.launch(self.script("fail.py", "def step():\n    raise ValueError('nan loss')\n"
                                    "step()\n"))
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("Traceback (most recent call last):\n  File \"%s\""
                                            % os.path.join(self.dir, "fail.py")), r.stderr)
        self.assertTrue(r.stderr.endswith("ValueError: nan loss\n"), r.stderr)
        self.assertNotIn("runpy", r.stderr)

    def test_a_missing_script_is_named_with_status_2(self):
        r = self.launch("nope.py", "--x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("spindle_bridge.launch: trainer script nope.py not found (no such file; "
                      "working directory %s)" % self.dir, r.stderr)
        self.assertEqual(self.launch().returncode, 2)

    def test_output_is_line_buffered(self):
        s = self.script("slow.py", "import time\nprint('step 1')\ntime.sleep(60)\n")
        env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONUNBUFFERED", None)  # the launcher's own doing, not the environment's
        p = subprocess.Popen([sys.executable, "-m", "spindle_bridge.launch", s], env=env,
                             stdout=subprocess.PIPE, text=True)
        try:
            ready, _, _ = select.select([p.stdout], [], [], 20)  # long before the script ends
            self.assertEqual(ready, [p.stdout], "the line printed was not flushed")
            self.assertEqual(p.stdout.readline(), "step 1\n")
        finally:
            os.killpg(p.pid, 9)
            p.wait(10)
            p.stdout.close()

    def test_the_group_dies_with_the_launchers_parent(self):
        child_pid = os.path.join(self.dir, "child.pid")
        s = self.script("train.py", "import subprocess, time\n"
                        "c = subprocess.Popen(['sleep', '60'])\n"
                        "open(%r, 'w').write(str(c.pid))\n"
                        "time.sleep(60)\n" % child_pid)
        # The parent (sh) starts the launcher in the background and exits after a second.
        parent = subprocess.run(
            ["sh", "-c", "PYTHONPATH=%s %s -m spindle_bridge.launch %s >/dev/null 2>&1 & "
             "echo $!; while [ ! -s %s ]; do sleep 0.1; done" % (PACKAGE, sys.executable, s,
                                                                   child_pid)],
            capture_output=True, text=True, timeout=60)
        launcher = int(parent.stdout.strip())
        with open(child_pid) as f:
            child = int(f.read())
        deadline = time.monotonic() + 10
        while (alive(launcher) or alive(child)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in (launcher, child):
            if alive(pid):
                os.kill(pid, 9)
                self.fail("process %d outlived the launcher's parent" % pid)


if __name__ == "__main__":
    unittest.main()
