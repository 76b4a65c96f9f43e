"""The label of rows a trainer must ignore, against real torch (skipped without torch): the
README's loss recipe on a batch of stand-ins only and on a mixed batch."""
import inspect
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import IGNORED_LABEL  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def recipe(logits, labels, weights):
    """The README's recipe: a per-row loss, weighted, averaged over the rows of weight 1."""
    per_row = F.cross_entropy(logits, labels, reduction="none")
    return per_row, (per_row * weights).sum() / weights.sum().clamp(min=1)


@unittest.skipIf(torch is None, "torch is not installed")
class IgnoredLabelTest(unittest.TestCase):
    def test_is_cross_entropys_default_ignore_index(self):
        default = inspect.signature(F.cross_entropy).parameters["ignore_index"].default
        self.assertEqual(IGNORED_LABEL, default)

    def test_recipe_on_a_batch_of_stand_ins_only_is_zero_with_finite_gradients(self):
        logits = torch.randn(4, 10, requires_grad=True)
        labels = torch.full((4,), IGNORED_LABEL, dtype=torch.int64)
        per_row, loss = recipe(logits, labels, torch.zeros(4))
        loss.backward()
        self.assertEqual(per_row.tolist(), [0.0] * 4)
        self.assertEqual(loss.item(), 0.0)
        self.assertTrue(torch.isfinite(logits.grad).all())
        self.assertEqual(logits.grad.abs().sum().item(), 0.0)

    def test_recipe_on_a_mixed_batch_is_the_mean_over_the_real_rows(self):
        torch.manual_seed(0)
        logits = torch.randn(5, 10)
        labels = torch.tensor([3, IGNORED_LABEL, 7, IGNORED_LABEL, 0])
        weights = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0])
        per_row, loss = recipe(logits, labels, weights)
        self.assertEqual([per_row[1].item(), per_row[3].item()], [0.0, 0.0])
        real = F.cross_entropy(logits[[0, 2, 4]], labels[[0, 2, 4]])
        self.assertAlmostEqual(loss.item(), real.item(), places=6)


if __name__ == "__main__":
    unittest.main()
