"""Ragged: a batch's variable-length field (token ids, raw bytes): one row of values per sample."""


class Ragged:
    """Rows of different lengths, as the feeder serves a list or bytes field: ``values`` (1-D,
    every row's elements back to back) and ``offsets`` (int32, ``rows + 1``: row ``i`` is
    ``values[offsets[i]:offsets[i + 1]]``, ``offsets[0]`` is 0). Torch tensors (numpy arrays with
    ``as_numpy=True``), on the loader's device; views of the feeder's memory, valid while the batch
    is (until the next batch is requested): copy (``.pad()``, ``.row(i).clone()``) what must outlive
    the step.

    ``len(r)`` rows; ``r.row(i)``, ``r[i]`` a row's values (a view); ``r.lengths()`` each row's
    length; ``r.pad(value=0)`` a new 2-D ``[rows, longest row]`` tensor of the values, each row
    filled up with ``value``: what an embedding layer takes (with a mask from ``lengths()``)."""

    __slots__ = ("values", "offsets")

    def __init__(self, values, offsets):
        if len(offsets.shape) != 1 or offsets.shape[0] < 1:
            raise ValueError("Invalid offsets of shape %s (rows + 1 values)"
                             % (tuple(offsets.shape),))
        self.values, self.offsets = values, offsets

    def __len__(self):
        return int(self.offsets.shape[0]) - 1

    def row(self, i):
        """Row ``i``'s values (a view; negative ``i`` counts from the end)."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError("row %d of %d" % (i, n))
        i %= n
        return self.values[int(self.offsets[i]):int(self.offsets[i + 1])]

    __getitem__ = row

    def __iter__(self):
        return (self.row(i) for i in range(len(self)))

    def lengths(self):
        """Each row's number of values (int64, ``[rows]``)."""
        o = self.offsets
        return (o[1:] - o[:-1]).long() if hasattr(o, "long") else (o[1:] - o[:-1]).astype("int64")

    def pad(self, value=0):
        """A new ``[rows, longest row]`` tensor (array) of the values' dtype on their device, row
        ``i`` holding row ``i``'s values then ``value`` up to the longest row's length."""
        lengths = self.lengths()
        rows = len(self)
        longest = int(lengths.max()) if rows else 0
        start, end = int(self.offsets[0]), int(self.offsets[rows])
        if hasattr(self.values, "new_full"):  # torch
            import torch
            out = self.values.new_full((rows, longest), value)
            columns = torch.arange(longest, device=self.values.device)
        else:
            xp = _array_module(self.values)
            out = xp.full((rows, longest), value, dtype=self.values.dtype)
            columns = xp.arange(longest)
        mask = columns[None, :] < lengths[:, None]
        out[mask] = self.values[start:end]  # row-major: the rows' values in order
        return out

    def __repr__(self):
        return "Ragged(rows=%d, values=%d of %s)" % (len(self), int(self.values.shape[0]),
                                                     self.values.dtype)


def _array_module(array):
    """numpy, or cupy for a cupy array (a CUDA feeder read without torch)."""
    if type(array).__module__.startswith("cupy"):
        import cupy
        return cupy
    import numpy
    return numpy
