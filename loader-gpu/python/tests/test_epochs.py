"""The client across a run's epochs (one connection per epoch), its state file and
load_state_dict, against a fake feeder that serves legs as ``bin/spindle train``'s does."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_feeder import TOKEN, HostFeeder, leg_state  # noqa: E402
from spindle_bridge import ProtocolError, SpindleLoader  # noqa: E402
from spindle_bridge.client import _plan_identity  # noqa: E402
from spindle_bridge.state_file import StateFile  # noqa: E402


class EpochsTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name
        self.state_out = os.path.join(self.dir, "state.json")

    def feeder(self, legs, state_file=None):
        f = HostFeeder(self.dir, legs, state_file)
        f.start()
        return f

    def loader(self, f, **kw):
        loader = SpindleLoader(f.path, 0, 1, as_numpy=True, token=TOKEN, timeout_s=10, **kw)
        self.addCleanup(loader.close)
        return loader

    def finish(self, f, loader):
        loader.close()
        f.join(10)
        self.assertFalse(f.is_alive(), "the fake feeder still waits for a trainer")
        self.assertIsNone(f.error)

    def test_without_epochs_the_loader_serves_one_leg(self):
        f = self.feeder([(0, 2), (1, 2)])
        loader = self.loader(f)
        self.assertEqual(([b.number for b in loader], [b.number for b in loader]), ([0, 1], []))
        self.assertEqual(loader.epoch, 0)
        loader.close()
        self.assertEqual(f.of("hello"), [(-1, "")])

    def test_iterating_again_after_an_end_connects_anew_for_the_next_epoch(self):
        f = self.feeder([(0, 2), (1, 3), (2, 1)])
        loader = self.loader(f, epochs=3)
        got = []
        for _ in range(4):
            numbers = [b.number for b in loader]
            got.append((loader.epoch, numbers))
        self.assertEqual(got, [(0, [0, 1]), (1, [0, 1, 2]), (2, [0]), (2, [])])
        self.finish(f, loader)
        self.assertEqual(f.of("hello"), [(-1, "")] * 3)  # no state: the leg's start
        self.assertEqual(len(f.of("bye")), 3)
        self.assertEqual(f.of("release"), [(0,), (1,), (0,), (1,), (2,), (0,)])

    def test_epochs_yields_each_epoch_of_the_run(self):
        f = self.feeder([(1, 1), (2, 2), (3, 1)])
        loader = self.loader(f, epochs=4)
        got = [(e, [b.number for b in loader]) for e in loader.epochs()]
        self.assertEqual(got, [(1, [0]), (2, [0, 1]), (3, [0])])
        self.assertEqual(list(loader.epochs()), [])
        self.finish(f, loader)

    def test_epochs_refuses_an_epoch_not_iterated_to_its_end(self):
        f = self.feeder([(0, 3), (1, 1)])
        loader = self.loader(f, epochs=2)
        with self.assertRaisesRegex(RuntimeError, r"epoch 0 of rank 0 was not iterated to its "
                                    r"end \(1 batches consumed, batch 1 next\): the feeder still "
                                    r"serves it"):
            for _ in loader.epochs():
                next(iter(loader))
        self.assertEqual(len(f.of("hello")), 1)  # did not connect for epoch 1

    def test_epochs_needs_the_runs_end_epoch(self):
        f = self.feeder([(0, 1)])
        with self.assertRaisesRegex(ValueError, r"needs the run's end epoch: pass epochs=E "
                                    r"\(SPINDLE_EPOCHS\)"):
            next(self.loader(f).epochs())
        with self.assertRaisesRegex(ValueError, r"Invalid epochs: 0 \(must be an integer > 0"):
            SpindleLoader(f.path, 0, 1, token=TOKEN, epochs=0)

    def test_set_epoch_accepts_only_the_epoch_served_next(self):
        f = self.feeder([(0, 1), (1, 1)])
        loader = self.loader(f, epochs=2)
        loader.set_epoch(0)
        with self.assertRaisesRegex(ValueError, r"set_epoch\(1\): rank 0 is served epoch 0 next "
                                    r"\(Spindle serves epochs in plan order\)"):
            loader.set_epoch(1)
        list(loader)
        with self.assertRaisesRegex(ValueError, r"set_epoch\(0\): rank 0 is served epoch 1"):
            loader.set_epoch(0)
        loader.set_epoch(1)
        list(loader)
        with self.assertRaisesRegex(ValueError, r"set_epoch\(2\): rank 0's run ended with "
                                    r"epoch 1 \(epochs=2\)"):
            loader.set_epoch(2)
        self.finish(f, loader)

    def test_a_feeder_serving_another_epoch_next_is_refused(self):
        f = self.feeder([(0, 1), (0, 1)])
        loader = self.loader(f, epochs=2)
        list(loader)
        with self.assertRaisesRegex(ProtocolError, r"after epoch 0's END the feeder on .* "
                                    r"served epoch 0 to rank 0 \(expected 1\)"):
            list(loader)

    def test_the_state_file_holds_each_finished_step_before_the_next_request(self):
        f = self.feeder([(0, 2), (1, 1)], self.state_out)
        loader = self.loader(f, epochs=2, state_out=self.state_out)
        consumed = []
        for _ in loader.epochs():
            for b in loader:
                with open(self.state_out) as s:  # the step of b is not finished yet
                    consumed.append((b.number, json.load(s)["batchesConsumed"]))
            with open(self.state_out) as s:
                consumed.append(("end", json.load(s)))
        self.finish(f, loader)
        self.assertEqual(consumed, [(0, [0]), (1, [1]), ("end", leg_state(0, 2)),
                                    (0, [0]), ("end", leg_state(1, 1))])
        # what the feeder saw in the file at each request: the state after every finished step
        self.assertEqual([s[0]["epoch"] for s in f.of("next")], [0, 0, 0, 1, 1])
        self.assertEqual([s[0]["batchesConsumed"] for s in f.of("next")],
                         [[0], [1], [2], [0], [1]])
        self.assertEqual(sorted(os.listdir(self.dir)), ["bridge.sock", "slab", "state.json"])

    def test_the_state_file_is_the_state_dict_as_json(self):
        f = self.feeder([(0, 3)], self.state_out)
        loader = self.loader(f, state_out=self.state_out)
        for b in loader:
            with open(self.state_out) as s:
                text = s.read()
            self.assertEqual(json.loads(text)["batchesConsumed"], [b.number])
            loader.batches_yielded -= 1  # the state as it was before this batch
            self.assertEqual(text, json.dumps(loader.state_dict()))
            loader.batches_yielded += 1
        self.finish(f, loader)

    def test_the_state_file_resumes_a_restarted_trainer(self):
        f = self.feeder([(0, 4)], self.state_out)
        loader = self.loader(f, state_out=self.state_out)
        it = iter(loader)
        next(it), next(it), next(it)  # dies during batch 2's step: 2 steps finished
        loader._sock.close()  # (without BYE, like a killed process)
        with open(self.state_out) as s:
            saved = json.load(s)
        self.assertEqual(saved, leg_state(0, 2))
        env = {"RANK": "0", "WORLD_SIZE": "1", "SPINDLE_SOCKET": f.path, "SPINDLE_RUN_TOKEN":
               TOKEN, "SPINDLE_STATE": self.state_out, "SPINDLE_STATE_OUT": self.state_out,
               "SPINDLE_EPOCHS": "1", "SPINDLE_TIMEOUT_S": "10"}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            again = SpindleLoader.from_env(as_numpy=True)
        finally:
            for k, v in old.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        self.assertEqual((again.end_epoch, [b.number for b in again]), (1, [2, 3]))
        self.finish(f, again)
        self.assertEqual(f.of("hello"), [(-1, ""), (2, _plan_identity(saved))])
        with open(self.state_out) as s:
            self.assertEqual(json.load(s), leg_state(0, 4))

    def test_load_state_dict_before_the_first_batch_connects_with_that_state(self):
        f = self.feeder([(0, 5)])
        loader = self.loader(f)
        loader.load_state_dict(loader.state_dict())  # the same state: nothing to do
        loader.load_state_dict(leg_state(0, 3))
        b = next(iter(loader))
        self.assertEqual(b.number, 3)
        with self.assertRaisesRegex(RuntimeError, r"load_state_dict: rank 0 already took 1 "
                                    r"batches of this leg \(batch 4 next\)"):
            loader.load_state_dict(leg_state(0, 2))
        loader.load_state_dict(leg_state(0, 4))  # where it stands: nothing to do
        self.assertEqual([b.number for b in loader], [4])
        self.finish(f, loader)
        self.assertEqual(f.of("hello"), [(-1, ""), (3, _plan_identity(leg_state(0, 3)))])


class StateFileTest(unittest.TestCase):
    def test_each_new_document_replaces_the_file_and_a_repeated_one_is_not_written(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "s.json")
        f = StateFile(path)
        f.write('{"a": 1}')
        first = os.stat(path).st_ino
        f.write('{"a": 1}')
        self.assertEqual(os.stat(path).st_ino, first)
        f.write('{"a": 2}')
        self.assertNotEqual(os.stat(path).st_ino, first)  # a new file renamed over the old
        with open(path) as s:
            self.assertEqual(s.read(), '{"a": 2}')
        self.assertEqual(os.listdir(d.name), ["s.json"])

    def test_a_reader_of_the_previous_document_keeps_it_whole_on_either_path(self):
        for swap in (True, False):  # renameat2's swap, and the rename where it is missing
            d = tempfile.TemporaryDirectory()
            self.addCleanup(d.cleanup)
            path = os.path.join(d.name, "s.json")
            f = StateFile(path)
            if not swap:
                f._exchange = None
            f.write('{"a": 1}')
            with open(path) as reader:  # a launcher reading while the trainer writes
                for n in range(2, 50):
                    f.write('{"a": %d, "pad": "%s"}' % (n, "x" * n))
                self.assertEqual(reader.read(), '{"a": 1}')
            with open(path) as s:
                self.assertEqual(json.load(s), {"a": 49, "pad": "x" * 49})
            self.assertEqual(os.listdir(d.name), ["s.json"], "swap" if swap else "rename")

    def test_a_temporary_file_left_by_a_killed_write_is_not_reused(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "s.json")
        f = StateFile(path)
        with open(f._tmp, "w") as left:
            left.write('{"torn')
        with open(f._tmp) as reader:  # it may be a document some reader still has open
            f.write('{"a": 2}')
            self.assertEqual(reader.read(), '{"torn')
        with open(path) as s:
            self.assertEqual(s.read(), '{"a": 2}')
        self.assertEqual(os.listdir(d.name), ["s.json"])

    def test_a_folder_that_is_not_there_is_named(self):
        with self.assertRaisesRegex(OSError, r"cannot write the loader state file /nonexistent/"
                                    r"s.json \(state_out, SPINDLE_STATE_OUT\): No such file"):
            StateFile("/nonexistent/s.json").write("{}")


if __name__ == "__main__":
    unittest.main()
