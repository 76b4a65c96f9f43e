"""SpindleDataset and Batch in torch's DataLoader (skipped without torch)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_feeder import TOKEN, HostFeeder  # noqa: E402
from spindle_bridge import Batch, SpindleLoader  # noqa: E402

try:
    import torch
    from torch.utils.data import DataLoader
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "torch is not installed")
class DatasetTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def loader(self, legs, **kw):
        f = HostFeeder(self.dir, legs)
        f.start()
        loader = SpindleLoader(f.path, 0, 1, token=TOKEN, timeout_s=10, **kw)
        self.addCleanup(loader.close)
        return f, loader

    def test_batches_keep_weights_keys_and_indices_through_a_dataloader(self):
        f, loader = self.loader([(0, 2), (1, 1)], epochs=2)
        batches = DataLoader(loader.as_dataset(), batch_size=None)
        got = []
        for epoch in loader.epochs():
            for batch in batches:
                self.assertIsInstance(batch, Batch)
                self.assertIs(batch.images, loader.last.images)  # the feeder's memory, no copy
                images, labels = batch
                self.assertEqual((images.dtype, tuple(images.shape)), (torch.uint8, (2, 2, 2, 1)))
                got.append((epoch, batch.number, batch.weights.tolist(), batch.keys,
                            batch.indices, labels.dtype))
        loader.close()
        f.join(10)
        self.assertIsNone(f.error)
        self.assertEqual(got, [
            (0, 0, [1.0, 0.0], ["a0", "b0"], [0, 1], torch.int64),
            (0, 1, [1.0, 0.0], ["a1", "b1"], [10, 11], torch.int64),
            (1, 0, [1.0, 0.0], ["a0", "b0"], [0, 1], torch.int64)])

    def test_each_iteration_of_the_dataset_is_the_next_epoch(self):
        f, loader = self.loader([(0, 1), (1, 2)], epochs=2)
        ds = loader.as_dataset()
        self.assertEqual([[b.number for b in ds] for _ in range(3)], [[0], [0, 1], []])
        self.assertEqual(loader.epoch, 1)

    def test_a_rebuilt_batch_of_other_images_has_no_extras(self):
        f, loader = self.loader([(0, 1)])
        b = next(iter(loader))
        self.assertEqual(Batch(b.images, b.labels).weights.tolist(), [1.0, 0.0])
        other = Batch(b.images.clone(), b.labels)
        self.assertEqual((other.weights, other.keys, tuple(other)[1] is b.labels),
                         (None, None, True))

    def test_len_is_the_batches_of_the_current_epoch_also_in_a_dataloader(self):
        f, loader = self.loader([(0, 3), (1, 2)], epochs=2)
        batches = DataLoader(loader.as_dataset(), batch_size=None)
        lengths = []
        for epoch in loader.epochs():
            lengths.append((epoch, len(loader), len(batches), len(list(batches))))
        self.assertEqual(lengths, [(0, 3, 3, 3), (1, 2, 2, 2)])

    def test_len_counts_the_batches_consumed_before_a_resume(self):
        f, loader = self.loader([(0, 3)])
        loader.load_state_dict(dict(loader.state_dict(), batchesConsumed=[2]))
        self.assertEqual((len(loader), [b.number for b in loader]), (3, [2]))

    def test_pin_memory_warns_and_serves_the_same_batches(self):
        with self.assertWarnsRegex(UserWarning, r"pin_memory=True\): not pinning, (torch has no "
                                   r"CUDA device|CUDA cannot page-lock)"):
            f, loader = self.loader([(0, 2)], pin_memory=True)
        self.assertFalse(loader.pinned)
        self.assertEqual([b.indices for b in loader], [[0, 1], [10, 11]])

    def test_worker_processes_are_refused(self):
        f, loader = self.loader([(0, 1)])
        with self.assertRaisesRegex(RuntimeError, r"SpindleDataset cannot be read in DataLoader "
                                    r"worker processes \(num_workers > 0\)"):
            list(DataLoader(loader.as_dataset(), batch_size=None, num_workers=1))
        with self.assertRaisesRegex(RuntimeError, r"num_workers > 0"):
            list(DataLoader(loader.as_dataset(), batch_size=None, num_workers=1,
                            multiprocessing_context="spawn"))
        self.assertEqual([b.number for b in loader], [0])  # the trainer's loader is unharmed


if __name__ == "__main__":
    unittest.main()
