"""SpindleLoader(..., output="float32-nchw"): the DataLoader's normalised float32 NCHW batches,
made by the client from the feeder's uint8 ones, against torchvision's ToTensor + Normalize on the
same bytes; the batch taken ahead of the trainer, what the feeder sees, and the refusals. Against
the fake feeder (host_feeder.py); torch and torchvision where installed (else those tests skip)."""
import json
import os
import sys
import tempfile
import time
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_feeder import ROWS, SLOT, TOKEN, HostFeeder, leg_state  # noqa: E402
from spindle_bridge import SpindleLoader  # noqa: E402
from spindle_bridge.convert import IMAGENET_MEAN, IMAGENET_STD, Normalizer  # noqa: E402

try:
    import torch
    import torchvision.transforms as T
except ImportError:  # pragma: no cover - Debian's python3-torch and -torchvision are here
    torch = T = None

MEAN, STD = [0.5], [0.25]  # the fake feeder's images have one channel


def torchvision_of(uint8_nhwc, mean, std):
    """What a DataLoader gives for these images: ToTensor (HWC uint8 -> CHW float32 / 255),
    then Normalize(mean, std), image by image, stacked."""
    to_tensor, normalize = T.ToTensor(), T.Normalize(mean, std)
    return torch.stack([normalize(to_tensor(img.copy())) for img in uint8_nhwc])


class NormalizerTest(unittest.TestCase):
    @unittest.skipIf(torch is None, "torch and torchvision are not installed")
    def test_a_batch_is_bit_for_bit_torchvisions_to_tensor_then_normalize(self):
        rng = np.random.default_rng(7)
        images = rng.integers(0, 256, (4, 37, 29, 3), dtype=np.uint8)
        images[0, 0, :8, :] = [[0, 255, 128], [1, 254, 127], [2, 3, 4], [255, 0, 0],
                               [50, 100, 150], [200, 201, 202], [9, 99, 199], [64, 32, 16]]
        out = np.full((5, 3, 37, 29), np.nan, dtype=np.float32)
        got = Normalizer(IMAGENET_MEAN, IMAGENET_STD, torch).convert(images, out)
        expected = torchvision_of(images, IMAGENET_MEAN, IMAGENET_STD)
        self.assertEqual(got.shape, (4, 3, 37, 29))
        self.assertTrue(np.array_equal(got.view(np.int32), expected.numpy().view(np.int32)))
        self.assertTrue(np.isnan(out[4]).all(), "rows past the batch are left alone")

    def test_without_torch_the_table_is_the_same(self):
        a = Normalizer([0.485, 0.456, 0.406], [0.229, 0.224, 0.225], None).table
        self.assertEqual((a.shape, a.dtype), ((3, 256), np.float32))
        x = np.arange(256, dtype=np.float32) / np.float32(255)
        self.assertTrue(np.array_equal(a[1], (x - np.float32(0.456)) / np.float32(0.224)))
        if torch is not None:
            b = Normalizer([0.485, 0.456, 0.406], [0.229, 0.224, 0.225], torch).table
            self.assertTrue(np.array_equal(a.view(np.int32), b.view(np.int32)))

    def test_a_shape_that_does_not_fit_is_refused(self):
        n = Normalizer([0.5, 0.5], [0.5, 0.5])
        with self.assertRaisesRegex(ValueError, r"cannot convert \(1, 2, 2, 3\) images into "
                                    r"\(1, 3, 2, 2\) with 2 channel\(s\) of mean/std"):
            n.convert(np.zeros((1, 2, 2, 3), np.uint8), np.zeros((1, 3, 2, 2), np.float32))


class OutputTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def feeder(self, legs, state_file=None):
        f = HostFeeder(self.dir, legs, state_file)
        f.start()
        return f

    def loader(self, f, **kw):
        args = dict(token=TOKEN, timeout_s=10, output="float32-nchw", mean=MEAN, std=STD)
        args.update(kw)
        loader = SpindleLoader(f.path, 0, 1, **args)
        self.addCleanup(loader.close)
        return loader

    def feeder_images(self, n):
        """Batch n's uint8 [2, 2, 2, 1] images as the fake feeder's slab holds them."""
        start = (n % 4) * SLOT
        return np.frombuffer(self.slab()[start:start + 8], dtype=np.uint8).reshape(ROWS, 2, 2, 1)

    def feeder_labels(self, n):
        start = (n % 4) * SLOT + 32
        return np.frombuffer(self.slab()[start:start + 16], dtype=np.int64).tolist()

    def slab(self):
        with open(os.path.join(self.dir, "slab"), "rb") as s:
            return s.read()

    def finish(self, f, loader):
        loader.close()
        f.join(10)
        self.assertFalse(f.is_alive(), "the fake feeder still waits for a trainer")
        self.assertIsNone(f.error)

    @unittest.skipIf(torch is None, "torch and torchvision are not installed")
    def test_batches_are_torchvisions_float32_nchw_of_the_feeders_bytes(self):
        f = self.feeder([(0, 5)])
        loader = self.loader(f)
        got = []
        for b in loader:
            self.assertEqual((b.images.dtype, tuple(b.images.shape)), (torch.float32, (2, 1, 2, 2)))
            got.append((b.number, b.images.clone(), b.labels.tolist(), b.indices,
                        b.weights.tolist()))
        self.assertEqual([g[0] for g in got], [0, 1, 2, 3, 4])
        for n, images, labels, indices, weights in got:
            expected = torchvision_of(self.feeder_images(n), MEAN, STD)
            self.assertTrue(torch.equal(images, expected), "batch %d" % n)
            self.assertEqual((labels, indices, weights),
                             (self.feeder_labels(n), [10 * n, 10 * n + 1], [1.0, 0.0]))
        self.finish(f, loader)
        self.assertEqual(f.of("release"), [(n,) for n in range(5)])
        self.assertEqual(len(f.of("bye")), 1)

    def test_a_feeder_of_other_channels_than_mean_and_std_is_refused(self):
        f = self.feeder([(0, 2)])
        with self.assertRaisesRegex(ValueError, r"output='float32-nchw': the feeder on .* serves "
                                    r"1 channel\(s\), mean/std give 3: pass mean= and std= with "
                                    r"one value per channel"):
            self.loader(f, mean=None, std=None)  # ImageNet's three
        deadline = time.monotonic() + 10
        while not f.of("bye") and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(len(f.of("bye")), 1)  # it said goodbye at once

    def test_numpy_arrays_hold_the_normalised_values(self):
        f = self.feeder([(0, 2)])
        loader = self.loader(f, as_numpy=True)
        got = [(b.number, b.images.copy()) for b in loader]
        for n, images in got:
            expected = (self.feeder_images(n).transpose(0, 3, 1, 2).astype(np.float32)
                        / np.float32(255) - np.float32(0.5)) / np.float32(0.25)
            self.assertEqual(images.dtype, np.float32)
            self.assertTrue(np.array_equal(images, expected), "batch %d" % n)
        self.finish(f, loader)

    def test_the_next_batch_is_taken_while_the_step_runs_and_the_state_counts_steps(self):
        state_out = os.path.join(self.dir, "state.json")
        f = self.feeder([(0, 3)], state_out)
        loader = self.loader(f, state_out=state_out, as_numpy=True)
        it = iter(loader)
        first = next(it)
        loader._pending.result(10)  # batch 1 arrives during batch 0's step
        self.assertEqual([b[0] for b in f.of("next")], [{**leg_state(0), "batchesConsumed": [0]},
                                                        {**leg_state(0), "batchesConsumed": [0]}])
        self.assertEqual(f.of("release"), [])  # batch 0's step is not finished
        self.assertEqual((first.number, loader.state_dict()["batchesConsumed"]), (0, [1]))
        numbers = []
        for b in it:  # each step lasts until the batch after it has arrived
            numbers.append(b.number)
            loader._pending.result(10)
        self.assertEqual(numbers, [1, 2])
        with open(state_out) as s:
            self.assertEqual(json.load(s), leg_state(0, 3))
        self.finish(f, loader)
        self.assertEqual(f.of("release"), [(0,), (1,), (2,)])
        # each request was sent one step ahead: the file held the steps finished by then
        self.assertEqual([s[0]["batchesConsumed"] for s in f.of("next")], [[0], [0], [1], [2]])

    def test_closing_mid_leg_hands_the_batch_taken_ahead_back_to_the_feeder(self):
        f = self.feeder([(0, 4)])
        loader = self.loader(f, as_numpy=True)
        it = iter(loader)
        next(it), next(it)  # batches 0 and 1 consumed; batch 2 taken ahead
        loader._pending.result(10)
        state = loader.state_dict()
        loader.close()
        again = self.loader(f, as_numpy=True, state=state)
        self.assertEqual([b.number for b in again], [2, 3])
        self.finish(f, again)
        # the first trainer released what it consumed, and left without BYE: its batch 2 stays
        # the rank's (a feeder serves it to the next trainer)
        self.assertEqual(f.of("release"), [(0,), (1,), (2,), (3,)])
        self.assertEqual(len(f.of("bye")), 1)
        self.assertEqual(f.of("hello"), [(-1, ""), (2, f.of("hello")[1][1])])

    def test_epochs_reconnect_and_convert_each_leg(self):
        f = self.feeder([(0, 2), (1, 1)])
        loader = self.loader(f, as_numpy=True, epochs=2)
        got = [(e, [b.number for b in loader]) for e in loader.epochs()]
        self.assertEqual(got, [(0, [0, 1]), (1, [0])])
        self.finish(f, loader)
        self.assertEqual(len(f.of("bye")), 2)

    def test_bad_settings_are_refused_naming_them(self):
        f = self.feeder([(0, 1)])
        with self.assertRaisesRegex(ValueError, r"Invalid output: 'float16' \(must be None, the "
                                    r"feeder's batches, or one of float32-nchw\)"):
            SpindleLoader(f.path, 0, 1, token=TOKEN, output="float16")
        with self.assertRaisesRegex(ValueError, r"mean= and std= need output=\"float32-nchw\""):
            SpindleLoader(f.path, 0, 1, token=TOKEN, mean=[0.5], std=[0.5])
        with self.assertRaisesRegex(ValueError, r"needs both mean= and std="):
            SpindleLoader(f.path, 0, 1, token=TOKEN, output="float32-nchw", mean=[0.5])
        with self.assertRaisesRegex(ValueError, r"Invalid std \[0.0\] or mean \[0.5\]"):
            SpindleLoader(f.path, 0, 1, token=TOKEN, output="float32-nchw", mean=[0.5],
                          std=[0])
        with self.assertRaisesRegex(ValueError, r"output='float32-nchw' is made on the host; a "
                                    r"feeder on cuda:0 serves uint8 batches in device memory"):
            SpindleLoader(f.path, 0, 1, token=TOKEN, output="float32-nchw", device="cuda:0")
        self.assertEqual(f.of("hello"), [])  # refused before connecting


if __name__ == "__main__":
    unittest.main()
