"""pin_memory=True: with torch and CUDA each batch is copied once into pinned memory
(Tensor.pin_memory()), with output= the conversion writes into pinned buffers; without either
the loader warns why and serves views. A stand-in for CUDA (is_available, Tensor.pin_memory
recording its calls) runs the pinning path on a machine without a GPU; the real pinned allocator
runs only on one (bin/gpu-check)."""
import os
import sys
import tempfile
import unittest
import warnings
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import pinned  # noqa: E402
from spindle_bridge import SpindleLoader  # noqa: E402
from spindle_bridge import client  # noqa: E402
from host_feeder import TOKEN, HostFeeder  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


class _Cuda:
    def __init__(self, available):
        self.available = available

    def is_available(self):
        return self.available

    def cudart(self):
        raise AssertionError("nothing may be registered with CUDA")


class _Torch:
    def __init__(self, cuda):
        self.cuda = _Cuda(cuda)


class WarnUnpinnedTest(unittest.TestCase):
    def warning(self, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.assertIsNone(pinned.warn_unpinned(torch))
        self.assertEqual(len(caught), 1, caught)
        return str(caught[0].message)

    def test_it_pins_only_with_torch_and_cuda(self):
        self.assertTrue(pinned.can_pin(_Torch(cuda=True)))
        self.assertFalse(pinned.can_pin(_Torch(cuda=False)))
        self.assertFalse(pinned.can_pin(None))

    def test_without_cuda_or_torch_it_says_so(self):
        self.assertEqual(self.warning(_Torch(cuda=False)),
                         "SpindleLoader(pin_memory=True): not pinning, torch has no CUDA device")
        self.assertEqual(self.warning(None),
                         "SpindleLoader(pin_memory=True): not pinning, torch is not used "
                         "(as_numpy=True or torch not installed)")


@unittest.skipIf(torch is None, "needs torch")
class PinnedBatchesTest(unittest.TestCase):
    """The loader's pinning path against a stand-in CUDA: which tensors are copied into pinned
    memory, and that the batches are the same values as unpinned ones, not views of the slab."""

    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name
        self.pinned = []  # (shape, dtype) of each tensor copied into "pinned" memory

        def pin_memory(t):
            self.pinned.append((tuple(t.shape), t.dtype))
            return t.clone()

        def pinned_empty(torch_, shape, dtype):
            self.pinned.append((tuple(shape), dtype))
            return torch_.empty(shape, dtype=dtype)

        for patch in (mock.patch.object(torch.cuda, "is_available", return_value=True),
                      mock.patch.object(torch.Tensor, "pin_memory", pin_memory, create=True),
                      mock.patch.object(client, "pinned_empty", pinned_empty)):
            patch.start()
            self.addCleanup(patch.stop)

    def batches(self, **kw):
        folder = tempfile.mkdtemp(dir=self.dir)  # a feeder (its socket) per loader
        f = HostFeeder(folder, [(0, 2)])
        f.start()
        loader = SpindleLoader(f.path, 0, 1, token=TOKEN, timeout_s=10, **kw)
        self.addCleanup(loader.close)
        got = []
        for b in loader:
            got.append((b.images.clone(), b.labels.tolist(), b.weights.tolist(), b.indices))
        return loader, got

    def test_images_labels_and_weights_are_copied_once_per_batch(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "not pinning" warning
            loader, got = self.batches(pin_memory=True)
        self.assertTrue(loader.pinned)
        self.assertEqual([shape for shape, _ in self.pinned],
                         [s for b in got for s in (tuple(b[0].shape), (len(b[1]),), (len(b[2]),))])
        self.assertEqual([dtype for _, dtype in self.pinned],
                         [torch.uint8, torch.int64, torch.float32] * len(got))
        self.pinned.clear()
        plain, same = self.batches()
        self.assertFalse(plain.pinned)
        self.assertEqual(self.pinned, [])
        self.assertEqual([(g[0].tolist(),) + g[1:] for g in got],
                         [(g[0].tolist(),) + g[1:] for g in same])

    def test_with_output_each_batch_is_converted_into_a_new_pinned_tensor(self):
        loader, got = self.batches(pin_memory=True, output="float32-nchw", mean=(0.5,),
                                   std=(0.25,))
        self.assertTrue(loader.pinned)
        # per batch: its images' tensor (never two buffers in turn: a non_blocking copy from one
        # could still be queued when it is overwritten), then its labels and weights
        self.assertEqual([(len(s), d) for s, d in self.pinned],
                         [(4, torch.float32), (1, torch.int64), (1, torch.float32)] * len(got))
        self.pinned.clear()
        _, same = self.batches(output="float32-nchw", mean=(0.5,), std=(0.25,))
        self.assertEqual([(g[0].tolist(),) + g[1:] for g in got],
                         [(g[0].tolist(),) + g[1:] for g in same])


if __name__ == "__main__":
    unittest.main()
