"""spindle_bridge.checkpoint: the model, the optimizer and the loader's state in one atomic file
per rank; loaded back by hand (the loader resumes from the checkpoint's state) and as
``bin/spindle train`` directs it (SPINDLE_CHECKPOINT_OUT, SPINDLE_CHECKPOINT), against a fake
feeder that serves legs as train's does. Needs torch (skipped without it)."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_feeder import TOKEN, HostFeeder  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - Debian's python3-torch is installed here
    torch = None

from spindle_bridge import SpindleLoader, checkpoint  # noqa: E402


@unittest.skipIf(torch is None, "torch is not installed")
class CheckpointTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name
        self.path = os.path.join(self.dir, "ckpt", "rank-0.pt")
        self.record = os.path.join(self.dir, "record.json")
        checkpoint._known.clear()  # a new trainer process
        torch.manual_seed(0)

    def feeder(self, legs):
        f = HostFeeder(self.dir, legs)
        f.start()
        return f

    def loader(self, f, **kw):
        loader = SpindleLoader(f.path, 0, 1, token=TOKEN, timeout_s=10, **kw)
        self.addCleanup(loader.close)
        return loader

    @staticmethod
    def model():
        m = torch.nn.Linear(4, 2)
        return m, torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

    @staticmethod
    def step(model, opt, batch):
        x = batch.images.reshape(len(batch.labels), -1).float() / 255
        loss = (model(x).sum(1) * batch.weights).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

    @staticmethod
    def snapshot(model):
        return {k: v.clone() for k, v in model.state_dict().items()}

    def assertSameModel(self, a, b):
        self.assertEqual(a.keys(), b.keys())
        for k in a:
            self.assertTrue(torch.equal(a[k], b[k]), k)

    def train_steps(self, loader, model, opt, n, save_each=True):
        """n steps; a checkpoint after each; returns the model after each step."""
        after = []
        for i, batch in enumerate(loader, 1):
            self.step(model, opt, batch)
            after.append(self.snapshot(model))
            if save_each:
                checkpoint.save(self.path, model, opt, loader, step=i)
            if i == n:
                break
        return after

    def test_a_checkpoint_resumes_model_optimizer_and_loader_by_hand(self):
        f = self.feeder([(0, 4)])
        loader = self.loader(f)
        model, opt = self.model()
        after = self.train_steps(loader, model, opt, 2)
        loader.close()  # the trainer dies: the feeder keeps the leg for the next one
        model2, opt2 = self.model()
        loader2 = self.loader(f)
        self.assertEqual(checkpoint.load(self.path, model2, opt2, loader2), {"step": 2})
        self.assertSameModel(self.snapshot(model2), after[1])
        self.assertEqual(opt2.state_dict()["state"].keys(), opt.state_dict()["state"].keys())
        for k, s in opt.state_dict()["state"].items():
            self.assertTrue(torch.equal(s["momentum_buffer"],
                                        opt2.state_dict()["state"][k]["momentum_buffer"]))
        self.assertEqual([b.number for b in loader2], [2, 3])  # the loader resumed with it
        self.assertEqual(f.of("hello")[-1][0], 2)

    def test_each_save_replaces_the_file_whole_and_keeps_the_one_before(self):
        f = self.feeder([(0, 4)])
        loader = self.loader(f)
        model, opt = self.model()
        self.train_steps(loader, model, opt, 3)
        files = sorted(os.listdir(os.path.dirname(self.path)))
        self.assertEqual(files, ["rank-0.pt", "rank-0.pt.prev"])  # no temporary file left
        self.assertEqual(torch.load(self.path)["extra"], {"step": 3})
        prev = torch.load(self.path + ".prev")
        self.assertEqual((prev["extra"], prev["loader"]["batchesConsumed"]), ({"step": 2}, [2]))
        self.assertEqual(prev["format"], "spindle-checkpoint/1")

    def test_a_second_save_of_the_same_step_keeps_the_checkpoint_before_it(self):
        f = self.feeder([(0, 4)])
        with mock.patch.dict(os.environ, {"SPINDLE_CHECKPOINT_OUT": self.record}):
            loader = self.loader(f)
            model, opt = self.model()
            self.train_steps(loader, model, opt, 2)
            checkpoint.save(self.path, model, opt, loader, step=2, end_of_epoch=True)
        self.assertEqual(torch.load(self.path)["extra"], {"step": 2, "end_of_epoch": True})
        self.assertEqual(torch.load(self.path + ".prev")["extra"], {"step": 1})
        with open(self.record) as r:
            got = [(c["file"], c["state"]["batchesConsumed"]) for c in json.load(r)["checkpoints"]]
        self.assertEqual(got, [(self.path, [2]), (self.path + ".prev", [1])])

    def test_a_save_that_fails_leaves_the_last_checkpoint_and_no_temporary_file(self):
        f = self.feeder([(0, 4)])
        loader = self.loader(f)
        model, opt = self.model()
        self.train_steps(loader, model, opt, 1)
        with self.assertRaises(Exception):
            checkpoint.save(self.path, model, opt, loader, step=2, hook=lambda: 0)  # unpicklable
        self.assertEqual(os.listdir(os.path.dirname(self.path)), ["rank-0.pt"])
        self.assertEqual(torch.load(self.path)["extra"], {"step": 1})

    def test_no_checkpoint_loads_nothing(self):
        f = self.feeder([(0, 2)])
        loader = self.loader(f)
        model, _ = self.model()
        before = self.snapshot(model)
        self.assertIsNone(checkpoint.load(self.path, model, None, loader))
        self.assertSameModel(self.snapshot(model), before)
        self.assertEqual([b.number for b in loader], [0, 1])

    def test_under_train_each_save_records_its_checkpoints_newest_first(self):
        f = self.feeder([(0, 4)])
        with mock.patch.dict(os.environ, {"SPINDLE_CHECKPOINT_OUT": self.record,
                                          "SPINDLE_CHECKPOINT": ""}):
            loader = self.loader(f)
            model, opt = self.model()
            self.assertIsNone(checkpoint.load(self.path, model, opt, loader))
            records = []
            for i, batch in enumerate(loader, 1):
                self.step(model, opt, batch)
                checkpoint.save(self.path, model, opt, loader, step=i)
                with open(self.record) as r:
                    records.append(json.load(r))
                if i == 2:
                    break
        self.assertEqual([r["format"] for r in records], ["spindle-checkpoint-record/1"] * 2)
        self.assertEqual([[(c["file"], c["state"]["batchesConsumed"]) for c in r["checkpoints"]]
                          for r in records],
                         [[(self.path, [1])], [(self.path, [2]), (self.path + ".prev", [1])]])

    def test_under_train_the_chosen_previous_checkpoint_is_loaded_and_becomes_the_latest(self):
        f = self.feeder([(0, 4)])
        env = {"SPINDLE_CHECKPOINT_OUT": self.record, "SPINDLE_CHECKPOINT": ""}
        with mock.patch.dict(os.environ, env):
            loader = self.loader(f)
            model, opt = self.model()
            after = self.train_steps(loader, model, opt, 2)
            loader.close()
        step1 = torch.load(self.path + ".prev")["loader"]
        checkpoint._known.clear()  # the restarted trainer
        env["SPINDLE_CHECKPOINT"] = self.path + ".prev"  # another rank had only step 1
        with mock.patch.dict(os.environ, env):
            loader2 = self.loader(f, state=step1)  # SPINDLE_STATE: the checkpoint's state
            model2, opt2 = self.model()
            self.assertEqual(checkpoint.load(self.path, model2, opt2, loader2), {"step": 1})
            self.assertSameModel(self.snapshot(model2), after[0])
            self.assertEqual(torch.load(self.path)["extra"], {"step": 1})
            with open(self.record) as r:
                self.assertEqual([c["file"] for c in json.load(r)["checkpoints"]], [self.path])
            batch = next(iter(loader2))
            self.assertEqual(batch.number, 1)
            self.step(model2, opt2, batch)
            checkpoint.save(self.path, model2, opt2, loader2, step=2)
            with open(self.record) as r:
                got = [(c["file"], c["state"]["batchesConsumed"]) for c in
                       json.load(r)["checkpoints"]]
        self.assertEqual(got, [(self.path, [2]), (self.path + ".prev", [1])])
        self.assertSameModel(self.snapshot(model2), after[1])  # the same step, the same model

    def test_under_train_without_a_chosen_checkpoint_the_rank_starts_fresh_and_says_so(self):
        f = self.feeder([(0, 4)])
        loader = self.loader(f)
        model, opt = self.model()
        self.train_steps(loader, model, opt, 1)
        loader.close()
        fresh, opt2 = self.model()
        before = self.snapshot(fresh)
        out = io.StringIO()
        with mock.patch.dict(os.environ, {"SPINDLE_CHECKPOINT_OUT": self.record}), \
                redirect_stdout(out):
            self.assertIsNone(checkpoint.load(self.path, fresh, opt2, self.loader(f)))
        self.assertSameModel(self.snapshot(fresh), before)
        self.assertIn("not loading %s: train restarts rank 0 from the run's start" % self.path,
                      out.getvalue())

    def test_under_train_a_checkpoint_that_does_not_fit_is_refused(self):
        f = self.feeder([(0, 4)])
        loader = self.loader(f)
        model, opt = self.model()
        self.train_steps(loader, model, opt, 2)
        loader.close()
        env = {"SPINDLE_CHECKPOINT_OUT": self.record,
               "SPINDLE_CHECKPOINT": os.path.join(self.dir, "other.pt")}
        with mock.patch.dict(os.environ, env):
            other = self.loader(f)
            with self.assertRaisesRegex(ValueError, "not that path nor its .prev"):
                checkpoint.load(self.path, model, opt, other)
            other.close()  # the fake feeder serves one connection at a time
        env["SPINDLE_CHECKPOINT"] = self.path  # step 2, but the loader resumes at batch 0
        with mock.patch.dict(os.environ, env):
            with self.assertRaisesRegex(RuntimeError, r"checkpoint .* is at epoch 0 batch 2 of "
                                                      r"rank 0, but the loader resumes at "
                                                      r"epoch 0 batch 0"):
                checkpoint.load(self.path, model, opt, self.loader(f))

    def test_a_file_that_is_no_checkpoint_is_named(self):
        os.makedirs(os.path.dirname(self.path))
        torch.save({"model": {}}, self.path)
        f = self.feeder([(0, 1)])
        model, opt = self.model()
        with self.assertRaisesRegex(ValueError, "rank-0.pt is not a Spindle checkpoint"):
            checkpoint.load(self.path, model, opt, self.loader(f))


if __name__ == "__main__":
    unittest.main()
