"""``python -m spindle_bridge.launch SCRIPT.py [ARGS...]``: runs a trainer script as
``python SCRIPT.py ARGS...`` would, in a process group of its own that dies with its parent.

``bin/spindle train`` starts each rank's trainer through it. The launcher

- makes its process the leader of a new process group (pgid = pid), so the JVM can signal the
  trainer and everything it started (DataLoader workers, subprocesses) with one ``kill -PGID``;
- watches its parent every 0.2 s from a daemon thread: when the parent is gone (the executor or
  driver JVM died, even by SIGKILL) it sends SIGKILL to the whole group, so no trainer outlives
  the job that fed it;
- makes stdout and stderr line-buffered (the JVM pumps the lines into its logs);
- dumps every thread's Python stack to stderr on SIGUSR1 (``faulthandler``): before it kills a
  trainer that hung, the JVM asks for the stacks, so the error shows where it was stuck;
- runs the script as ``__main__`` with ``sys.argv = [SCRIPT, ARGS...]`` and the script's folder
  first on ``sys.path``; the exit status is the script's (0, ``sys.exit(n)``, 1 after a
  traceback). A missing script: a message on stderr and status 2.

``python -m spindle_bridge.launch --warm`` is a trainer started before its rank is known: it
imports numpy, torch and the client, prints ``spindle-warm: ready`` (so a Python that cannot
import them fails there, saying why, as the JVM's check of the trainers' Python expects), then
reads one line from stdin: a JSON object ``{"env": {...}, "argv": [SCRIPT, ARGS...]}``. It adds
``env`` to its environment and runs the script as above. ``bin/spindle train`` on a local master
starts its ranks' interpreters this way beside Spark's start, so that ``import torch`` (about a
second) overlaps it instead of coming after the rank's task started. End of input before a line:
exit 0 (the run did not need it).
"""
import json
import faulthandler
import os
import runpy
import signal
import sys
import threading
import traceback

POLL_S = 0.2


WARM_READY = "spindle-warm: ready"


def main(argv, owned=False):
    """Runs ``argv`` (SCRIPT, ARGS...); ``owned``: this process already leads its group and
    watches its parent (a warm start)."""
    if argv and argv[0] == "--warm":
        return warm()
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write("usage: python -m spindle_bridge.launch SCRIPT.py [ARGS...]\n")
        return 2
    script = argv[0]
    if not os.path.isfile(script):
        sys.stderr.write("spindle_bridge.launch: trainer script %s not found (%s; working "
                         "directory %s)\n" % (script, "not a file" if os.path.exists(script)
                                              else "no such file", os.getcwd()))
        return 2
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)
    if not owned:
        lead_own_group()
        die_with_parent(os.getppid())
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.argv = [script] + list(argv[1:])
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except Exception as e:  # SystemExit and KeyboardInterrupt end the process as usual
        traceback.print_exception(type(e), e, _from_script(e.__traceback__))
        return 1
    return 0


def warm():
    """The ``--warm`` start: imports, says it is ready, then runs what the first line of stdin
    names (see the module's doc)."""
    lead_own_group()
    die_with_parent(os.getppid())
    import numpy  # noqa: F401  what every trainer imports first, and the check asks for
    import torch  # noqa: F401
    import spindle_bridge  # noqa: F401
    sys.stdout.write(WARM_READY + "\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    start = json.loads(line)
    os.environ.update(start["env"])
    for entry in reversed(start["env"].get("PYTHONPATH", "").split(os.pathsep)):
        if entry and entry not in sys.path:
            sys.path.insert(1, entry)  # as the interpreter would have put them at its start
    return main(start["argv"], owned=True)


def _from_script(tb):
    """The traceback without the launcher's and runpy's frames (as ``python SCRIPT`` shows)."""
    skip = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>")
    while tb is not None and tb.tb_next is not None and (
            tb.tb_frame.f_code.co_filename in skip):
        tb = tb.tb_next
    return tb


def lead_own_group():
    """Makes this process the leader of a new process group (a no-op if it leads one)."""
    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)


def die_with_parent(parent):
    """Starts the daemon thread that kills this process group once the parent is not
    ``parent`` any more (it died: this process was handed to init or a subreaper)."""
    def watch():
        while os.getppid() == parent:
            threading.Event().wait(POLL_S)
        os.killpg(0, signal.SIGKILL)
    threading.Thread(target=watch, name="spindle-parent-watch", daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
