"""A batch's extra fields as the trainer sees them (``Batch.fields``), from BATCH's field table.

Fixed fields are tensors ``[N]``, list and bytes fields :class:`Ragged` (values + offsets), all
views of the memory the batch lies in (no copy); text fields are lists of ``str`` (decoded here:
the trainer's own objects)."""
import numpy as np

from . import protocol as p
from .ragged import Ragged


def host_fields(mm, desc, torch, written):
    """The fields of batch ``desc`` in the feeder's shared memory ``mm`` (numpy views, torch
    tensors when ``torch`` is given); appends the ranges they lie in to ``written`` (the pages a
    trainer's writes may have copied, dropped when the batch is released)."""
    wrap = (lambda a: a) if torch is None else torch.from_numpy
    out = {}
    for f in desc["fields"]:
        values = _view(mm, f, "values", f["dtype"], desc, written)
        if f["kind"] == p.FIXED:
            out[f["name"]] = wrap(values)
            continue
        offsets = _view(mm, f, "offsets", np.int32, desc, written)
        check_offsets(f, offsets, len(values), desc)
        if f["kind"] == p.STRING:
            out[f["name"]] = strings(f, values.tobytes(), offsets.tolist(), desc)
        else:
            out[f["name"]] = Ragged(wrap(values), wrap(offsets))
    return out


def _view(mm, f, part, dtype, desc, written):
    offset, size = f[part + "_offset"], f[part + "_bytes"]
    if offset + size > len(mm):
        raise p.ProtocolError("batch %d: field %r's %s (%d bytes at %d) lie outside the %d-byte "
                              "slab" % (desc["batch"], f["name"], part, size, offset, len(mm)))
    written.append((offset, size))
    return np.frombuffer(mm, dtype=dtype, count=size // np.dtype(dtype).itemsize, offset=offset)


def check_offsets(f, offsets, count, desc):
    """A variable field's offsets must start at 0, never decrease and end at its value count."""
    o = np.asarray(offsets)
    if o[0] != 0 or o[-1] != count or (len(o) > 1 and (np.diff(o) < 0).any()):
        raise p.ProtocolError("batch %d: field %r's offsets %s... do not index its %d values"
                              % (desc["batch"], f["name"], o[:8].tolist(), count))


def strings(f, raw, offsets, desc):
    """Each row's text of a string field: ``raw[offsets[i]:offsets[i + 1]]`` decoded as UTF-8."""
    out = []
    for i in range(len(offsets) - 1):
        try:
            out.append(raw[offsets[i]:offsets[i + 1]].decode("utf-8"))
        except UnicodeDecodeError as e:
            raise p.ProtocolError("batch %d: field %r of row %d (key %r) is not UTF-8: %s"
                                  % (desc["batch"], f["name"], i, desc["keys"][i], e)) from None
    return out
