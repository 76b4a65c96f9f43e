"""pin_memory=True is refused with a warning that says why, whatever torch can do: without torch,
without CUDA, and with CUDA, where pinning the copy-on-write mapping hangs or breaks sharing (see
spindle_bridge.pinned). A stand-in torch says which case applies, so this runs without a GPU."""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import pinned  # noqa: E402


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

    def test_with_cuda_it_refuses_and_says_why(self):
        self.assertEqual(self.warning(_Torch(cuda=True)),
                         "SpindleLoader(pin_memory=True): not pinning, CUDA cannot page-lock this "
                         "process's copy-on-write mapping of the feeder's memory (see "
                         "spindle_bridge.pinned); batches are copied to the GPU unpinned")

    def test_without_cuda_or_torch_it_says_so(self):
        self.assertEqual(self.warning(_Torch(cuda=False)),
                         "SpindleLoader(pin_memory=True): not pinning, torch has no CUDA device")
        self.assertEqual(self.warning(None),
                         "SpindleLoader(pin_memory=True): not pinning, torch is not used "
                         "(as_numpy=True or torch not installed)")


if __name__ == "__main__":
    unittest.main()
