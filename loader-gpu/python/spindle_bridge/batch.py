"""Batch: what SpindleLoader yields, and how it survives torch's DataLoader."""

#: The label of a row the loss must ignore (padding, a stand-in of a quarantined sample):
#: PyTorch's ignore label, ``cross_entropy``'s default ``ignore_index``. Such rows also have weight
#: 0, so ``F.cross_entropy(logits, labels, reduction="none")`` is 0 on them, never an error.
IGNORED_LABEL = -100

# Batches a loader has handed out and not yet released, by id() of their images. torch's
# default_convert (DataLoader(batch_size=None)) rebuilds a namedtuple-like batch as
# ``type(batch)(images, labels)``; the rebuilt batch finds its extras here.
_LIVE = {}


class Batch(tuple):
    """One batch: unpacks as ``(images, labels)``; also carries ``weights`` (float32 ``[N]``,
    1.0 for a real sample, 0.0 for padding (``PAD`` remainder) and for a stand-in of a
    quarantined sample: multiply the per-sample loss by it), ``keys`` (sample keys),
    ``indices`` (plan indices), ``number`` (position in the rank's epoch) and ``rows``. Rows of
    weight 0 carry the label :data:`IGNORED_LABEL` (-100); a stand-in keeps its sample's key
    and plan index (as the job's quarantine list names it) and shows the batch's first good
    image (zeros when none is good), padding repeats the rank's first samples.
    ``images`` is None for a batch without images (a job whose declared fields have no
    ``image``, e.g. pre-tokenised text); labels are then -100 unless a ``label`` field is
    declared. ``images``, ``labels`` and ``weights`` are tensors (arrays with ``as_numpy=True``) on the
    loader's device.

    It looks like a namedtuple (``_fields``) so that ``torch.utils.data.DataLoader(...,
    batch_size=None)`` keeps it a Batch: ``Batch(images, labels)`` with the very images tensor of
    a batch the loader still holds is that batch again, extras included; other images give a
    Batch whose extras are None.

    ``fields``: the batch's extra fields (columns beyond image and label a job declares, e.g.
    ``--fields image=jpg,caption=txt,tokens=ids:list<int32>``), a dict by name in column order:
    a tensor ``[N]`` for a number per row (int32, int64, float32, float64), a ``list`` of ``str``
    for text, a :class:`spindle_bridge.Ragged` (values + offsets, ``.pad()``) for lists and raw
    bytes; empty for an image and label job. ``batch["caption"]`` is ``batch.fields["caption"]``;
    ``batch["image"]`` and ``batch["label"]`` are the images and labels. Tensors and Ragged views
    lie in the feeder's memory, like the images: valid until the next batch is requested, copy
    what must outlive the step (strings are the trainer's own)."""

    _fields = ("images", "labels")

    def __new__(cls, images, labels, weights=None, desc=None, fields=None):
        b = super().__new__(cls, (images, labels))
        b.images, b.labels = images, labels
        if desc is None:
            held = _LIVE.get(_key(images, labels))
            if held is not None and held.images is images and \
                    (images is not None or held.labels is labels):
                b.__dict__.update({k: v for k, v in held.__dict__.items() if k != "labels"})
                return b
            desc = dict.fromkeys(("batch", "rows", "indices", "keys", "shape", "dtype",
                                  "image_offset", "labels_offset"))
        b.weights = weights
        b.fields = {} if fields is None else fields
        b.number = desc["batch"]
        b.rows = desc["rows"]
        b.indices = desc["indices"]
        b.keys = desc["keys"]
        b.shape = desc["shape"]
        b.dtype = desc["dtype"]
        b.image_offset = desc["image_offset"]
        b.labels_offset = desc["labels_offset"]
        return b

    def __getitem__(self, key):
        """``batch[0]``/``batch[1]`` as a tuple; ``batch["image"]``, ``batch["label"]``, and
        ``batch[name]`` for an extra field (KeyError naming the batch's fields otherwise)."""
        if not isinstance(key, str):
            return tuple.__getitem__(self, key)
        if key == "image":
            return self.images
        if key == "label":
            return self.labels
        fields = self.__dict__.get("fields") or {}
        if key not in fields:
            raise KeyError("batch %s has no field %r (its fields: %s)"
                           % (self.__dict__.get("number"), key,
                              ", ".join(["image", "label"] + list(fields))))
        return fields[key]


def _key(images, labels):
    """The _LIVE key of a batch: its images, or its labels when it has none (images None)."""
    return id(labels) if images is None else id(images)


def hold(batch):
    """Registers a batch handed to the trainer (see _LIVE)."""
    _LIVE[_key(batch.images, batch.labels)] = batch


def drop(batch):
    """Unregisters a batch once it is released (or its loader closed)."""
    if batch is not None and _LIVE.get(_key(batch.images, batch.labels)) is batch:
        del _LIVE[_key(batch.images, batch.labels)]
