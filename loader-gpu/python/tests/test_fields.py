"""A batch's extra fields in the client: BATCH's field table, ``Batch.fields``/``batch[name]``
(tensors viewing the slot, lists of str, Ragged) from a fake feeder's slab, ``Ragged.pad``, and
the refusal of a feeder of the previous protocol version."""
import ctypes
import os
import socket
import struct
import sys
import tempfile
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_feeder import ROWS, TOKEN, HostFeeder  # noqa: E402
from spindle_bridge import ProtocolError, Ragged, SpindleLoader  # noqa: E402
from spindle_bridge import protocol as p  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SLOT = 256  # per batch: image 8 bytes at 0, labels at 32, then the fields (FIELDS)
IDS = lambda n: [n * 1000 + 1, -(n + 1) * 7]  # noqa: E731
SCORES = lambda n: [n + 0.25, -1.5]  # noqa: E731
CAPTIONS = lambda n: ["", "a photo %d — é" % n]  # noqa: E731
TOKENS = lambda n: [[n, n + 1, -3], []] if n % 2 else [[], [7]]  # noqa: E731


def field(name, dtype, kind, at, size, offsets_at=0, offsets_size=0):
    return (p.string(name) + struct.pack("<BB", dtype, kind)
            + struct.pack("<qqqq", at, size, offsets_at, offsets_size))


def offsets(rows):
    o = [0]
    for r in rows:
        o.append(o[-1] + len(r))
    return o


def slab_and_batch(batches=4, images=True):
    """A slab holding ``batches`` batches' images, labels and fields, and BATCH for each;
    ``images=False``: batches without images (ndim 0, 0 image bytes), as a feeder of a job
    without an image field sends them."""
    slab = bytearray(SLOT * batches)
    payloads = []
    for n in range(batches):
        base = n * SLOT
        text = [c.encode("utf-8") for c in CAPTIONS(n)]
        parts = [("id", 1, p.FIXED, struct.pack("<2q", *IDS(n)), None),
                 ("score", 2, p.FIXED, struct.pack("<2f", *SCORES(n)), None),
                 ("caption", 4, p.STRING, b"".join(text), offsets(text)),
                 ("tokens", 0, p.LIST, b"".join(struct.pack("<%di" % len(t), *t)
                                                for t in TOKENS(n)), offsets(TOKENS(n)))]
        at, table = base + 64, b""
        for name, dtype, kind, values, offs in parts:
            slab[at:at + len(values)] = values
            entry_at, at = at, at + 32
            if offs is None:
                table += field(name, dtype, kind, entry_at, len(values))
                continue
            slab[at:at + 12] = struct.pack("<3i", *offs)
            table += field(name, dtype, kind, entry_at, len(values), at, 12)
            at += 16
        head = (struct.pack("<qiBB", n, ROWS, 0, 4) + struct.pack("<qqqq", ROWS, 2, 2, 1)
                + struct.pack("<qqqB", base, 8, base + 32, 0)) if images else \
            (struct.pack("<qiBB", n, ROWS, 0, 0) + struct.pack("<qqqB", base, 0, base + 32, 0))
        slab[base + 32:base + 48] = struct.pack("<2q", -100, -100)
        payloads.append(head
                        + struct.pack("<H", len(parts)) + table
                        + struct.pack("<qq", 10 * n, 10 * n + 1) + struct.pack("<ff", 1.0, 1.0)
                        + p.string("a%d" % n) + p.string("b%d" % n))
    return bytes(slab), payloads


class RaggedTest(unittest.TestCase):
    def check(self, values, offs, to):
        r = Ragged(to(np.array(values, dtype=np.int32)), to(np.array(offs, dtype=np.int32)))
        self.assertEqual(len(r), len(offs) - 1)
        self.assertEqual([list(map(int, r.row(i))) for i in range(len(r))],
                         [values[offs[i]:offs[i + 1]] for i in range(len(r))])
        self.assertEqual(list(map(int, r[-1])), values[offs[-2]:offs[-1]])
        self.assertEqual(list(map(int, r.lengths())), [b - a for a, b in zip(offs, offs[1:])])
        with self.assertRaises(IndexError):
            r.row(len(r))
        return r

    def test_pad_fills_each_row_up_to_the_longest_with_the_value(self):
        for to in [np.asarray] + ([torch.from_numpy] if torch is not None else []):
            r = self.check([5, 6, 7, 8, 9, 10], [0, 3, 3, 4, 6], to)
            self.assertEqual(r.pad().tolist(), [[5, 6, 7], [0, 0, 0], [8, 0, 0], [9, 10, 0]])
            self.assertEqual(r.pad(value=-1).tolist(),
                             [[5, 6, 7], [-1, -1, -1], [8, -1, -1], [9, 10, -1]])
            self.assertEqual(r.pad().dtype, r.values.dtype)

    def test_pad_of_empty_rows_has_no_columns(self):
        for to in [np.asarray] + ([torch.from_numpy] if torch is not None else []):
            r = self.check([], [0, 0, 0], to)
            self.assertEqual(tuple(r.pad().shape), (2, 0))

    def test_offsets_must_be_one_dimensional_rows_plus_one(self):
        with self.assertRaisesRegex(ValueError, "Invalid offsets"):
            Ragged(np.zeros(3), np.zeros((0,), dtype=np.int32))


class FieldTableTest(unittest.TestCase):
    def test_a_batch_without_fields_has_an_empty_table(self):
        self.assertEqual(p.parse_batch(_plain())["fields"], [])

    def test_the_table_names_each_fields_dtype_kind_and_ranges(self):
        fields = p.parse_batch(slab_and_batch()[1][1])["fields"]
        self.assertEqual([(f["name"], f["dtype"], f["kind"]) for f in fields],
                         [("id", "int64", p.FIXED), ("score", "float32", p.FIXED),
                          ("caption", "uint8", p.STRING), ("tokens", "int32", p.LIST)])
        self.assertEqual((fields[0]["values_offset"], fields[0]["values_bytes"]), (SLOT + 64, 16))
        self.assertEqual(fields[3]["offsets_bytes"], 12)

    def test_an_entry_that_cannot_describe_its_rows_is_refused(self):
        base = struct.pack("<qiBB", 0, 2, 0, 1) + struct.pack("<q", 2) + struct.pack("<qqqB",
                                                                                     0, 2, 8, 0)
        tail = struct.pack("<qq", 0, 1) + struct.pack("<ff", 1, 1) + p.string("a") + p.string("b")
        for entry, message in [(field("x", 9, p.FIXED, 0, 16), "unknown dtype 9"),
                               (field("x", 1, p.FIXED, 0, 8), "8 value bytes"),
                               (field("x", 0, p.LIST, 0, 8, 64, 8), "8 offset bytes"),
                               (field("x", 0, p.STRING, 0, 8, 64, 12), "unknown dtype 0")]:
            with self.assertRaisesRegex(ProtocolError, message):
                p.parse_batch(base + struct.pack("<H", 1) + entry + tail)


def _plain():
    from host_feeder import batch
    return batch(0)


class FieldsClientTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def serve(self, batches, as_numpy):
        slab, payloads = slab_and_batch(batches)
        f = HostFeeder(self.dir, [(0, batches)], slab=slab, batch=payloads.__getitem__)
        f.start()
        loader = SpindleLoader(f.path, 0, 1, as_numpy=as_numpy, token=TOKEN, timeout_s=10)
        self.addCleanup(loader.close)
        return f, loader

    def check_batches(self, as_numpy):
        f, loader = self.serve(4, as_numpy)
        numbers = []
        for b in loader:
            n = b.number
            numbers.append(n)
            self.assertEqual(list(b.fields), ["id", "score", "caption", "tokens"])
            self.assertEqual(b["id"].tolist(), IDS(n))
            self.assertEqual(b["score"].tolist(), SCORES(n))
            self.assertEqual(b["caption"], CAPTIONS(n))
            tokens = b["tokens"]
            self.assertIsInstance(tokens, Ragged)
            self.assertEqual([t.tolist() for t in tokens], TOKENS(n))
            longest = max(len(t) for t in TOKENS(n))
            self.assertEqual(tokens.pad().tolist(),
                             [t + [0] * (longest - len(t)) for t in TOKENS(n)])
            self.assertIs(b["image"], b.images)
            self.assertIs(b["label"], b.labels)
            self.assertIs(b[0], b.images)
            with self.assertRaisesRegex(KeyError, "no field 'nope' \\(its fields: image, label, "
                                                  "id, score, caption, tokens\\)"):
                b["nope"]
            self.assertEqual(self.address_in_slab(loader, b["id"]), n * SLOT + 64)
            self.assertEqual(self.address_in_slab(loader, tokens.values), n * SLOT + 64 + 112)
        self.assertEqual(numbers, [0, 1, 2, 3])
        loader.close()
        f.join(10)
        self.assertIsNone(f.error)
        # every batch was released (its field pages dropped with the images')
        self.assertEqual(f.of("release"), [(0,), (1,), (2,), (3,)])

    def address_in_slab(self, loader, view):
        """Where a view lies in the mapped slab (it is a view of the slab, not a copy)."""
        base = ctypes.addressof(ctypes.c_char.from_buffer(loader._mm))
        ptr = view.data_ptr() if hasattr(view, "data_ptr") else view.__array_interface__["data"][0]
        return ptr - base

    def test_every_field_value_arrives_as_numpy_views(self):
        self.check_batches(as_numpy=True)

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_every_field_value_arrives_as_torch_views(self):
        self.check_batches(as_numpy=False)

    def test_fields_come_with_batches_converted_ahead(self):
        slab, payloads = slab_and_batch(3)
        f = HostFeeder(self.dir, [(0, 3)], slab=slab, batch=payloads.__getitem__)
        f.start()
        loader = SpindleLoader(f.path, 0, 1, as_numpy=True, token=TOKEN, timeout_s=10,
                               output="float32-nchw", mean=(0.5,), std=(0.25,))
        self.addCleanup(loader.close)
        got = [(b.number, b["id"].tolist(), b["caption"], [t.tolist() for t in b["tokens"]])
               for b in loader]
        self.assertEqual(got, [(n, IDS(n), CAPTIONS(n), TOKENS(n)) for n in range(3)])

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_fields_survive_a_dataloader_with_batch_size_none(self):
        _, loader = self.serve(2, as_numpy=False)
        dl = torch.utils.data.DataLoader(loader.as_dataset(), batch_size=None)
        got = [(b.number, b["caption"], b["id"].tolist()) for b in dl]
        self.assertEqual(got, [(n, CAPTIONS(n), IDS(n)) for n in range(2)])


class _DeviceArray(np.ndarray):
    """A cupy array's stand-in: ``get()`` copies to the host."""

    def get(self):
        return np.array(self)


class _FakeCupy:
    """Views host memory through ``__cuda_array_interface__`` as cupy views device memory."""

    def asarray(self, a):
        cai = a.__cuda_array_interface__
        dtype, shape = np.dtype(cai["typestr"]), cai["shape"]
        raw = (ctypes.c_char * (int(np.prod(shape)) * dtype.itemsize)).from_address(
            cai["data"][0])
        return np.frombuffer(raw, dtype=dtype).reshape(shape).view(_DeviceArray)

    def empty(self, n, dtype):
        return np.empty(n, dtype=dtype).view(_DeviceArray)

    class cuda:  # noqa: N801 (cupy's name)
        class Device:
            def __init__(self, ordinal):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


class CudaFieldsTest(unittest.TestCase):
    """CudaSlab.fields on a slab in host memory standing for the device (no GPU here): fixed
    fields are views at the slab's base + offset, lists Ragged views, text decoded on the host."""

    def test_fields_are_views_of_the_slab_ragged_and_text(self):
        from spindle_bridge import cuda
        slab, payloads = slab_and_batch(2)
        memory = ctypes.create_string_buffer(slab, len(slab))
        s = object.__new__(cuda.CudaSlab)
        s.torch, s.cupy, s.ordinal, s.size = None, _FakeCupy(), 0, len(slab)
        s.base = ctypes.addressof(memory)
        for n in range(2):
            d = p.parse_batch(payloads[n])
            f = s.fields(d)
            self.assertEqual(f["id"].tolist(), IDS(n))
            self.assertEqual(f["id"].__array_interface__["data"][0], s.base + n * SLOT + 64)
            self.assertEqual(f["score"].tolist(), SCORES(n))
            self.assertEqual(f["caption"], CAPTIONS(n))
            self.assertEqual([t.tolist() for t in f["tokens"]], TOKENS(n))
            longest = max(len(t) for t in TOKENS(n))
            self.assertEqual(f["tokens"].pad(value=-1).tolist(),
                             [t + [-1] * (longest - len(t)) for t in TOKENS(n)])
        # every row empty: no bytes to view, an empty array on the device instead
        empty = s._part(d, {"name": "e", "values_offset": 64, "values_bytes": 0}, "values",
                        "int32")
        self.assertEqual((empty.shape, empty.dtype), ((0,), np.int32))
        with self.assertRaisesRegex(ValueError, "field 'e' lies outside the 512-byte device slab"):
            s._part(d, {"name": "e", "values_offset": 500, "values_bytes": 16}, "values", "int32")


class OldFeederTest(unittest.TestCase):
    def test_a_feeder_of_protocol_version_5_is_refused_by_name(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "bridge.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        self.addCleanup(server.close)

        def old_feeder():
            conn, _ = server.accept()
            with conn:
                p.read_frame(conn)  # the client's HELLO
                conn.sendall(p.frame(p.WELCOME, b"\0" * 40, version=5))
        t = threading.Thread(target=old_feeder, daemon=True)
        t.start()
        with self.assertRaises(ProtocolError) as e:
            SpindleLoader(path, 0, 1, as_numpy=True, token=TOKEN, timeout_s=10)
        self.assertEqual(e.exception.code, "BAD_VERSION")
        self.assertIn("feeder speaks protocol version 5, this client version 6", str(e.exception))
        t.join(10)


if __name__ == "__main__":
    unittest.main()


class NoImageClientTest(unittest.TestCase):
    """Batches of a feeder without images (a job whose declared fields have no image): images
    is None, labels and fields arrive as for an image batch."""

    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def check(self, as_numpy):
        slab, payloads = slab_and_batch(3, images=False)
        f = HostFeeder(self.dir, [(0, 3)], slab=slab, batch=payloads.__getitem__)
        f.start()
        loader = SpindleLoader(f.path, 0, 1, as_numpy=as_numpy, token=TOKEN, timeout_s=10)
        self.addCleanup(loader.close)
        seen = []
        for b in loader:
            self.assertEqual(p.parse_batch(payloads[b.number])["shape"], ())
            self.assertIsNone(b.images)
            self.assertIsNone(b["image"])
            images, labels = b
            self.assertIsNone(images)
            self.assertEqual(labels.tolist(), [-100, -100])
            self.assertEqual(b["id"].tolist(), IDS(b.number))
            self.assertEqual([t.tolist() for t in b["tokens"]], TOKENS(b.number))
            self.assertEqual(b.keys, ["a%d" % b.number, "b%d" % b.number])
            # DataLoader(batch_size=None) rebuilds it as type(b)(images, labels): same batch
            again = type(b)(images, labels)
            self.assertEqual(again.number, b.number)
            self.assertEqual(again["caption"], CAPTIONS(b.number))
            seen.append(b.number)
        self.assertEqual(seen, [0, 1, 2])
        loader.close()
        f.join(10)
        self.assertIsNone(f.error)
        self.assertEqual(f.of("release"), [(0,), (1,), (2,)])

    def test_a_batch_without_images_has_images_none_and_its_fields_as_numpy(self):
        self.check(as_numpy=True)

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_a_batch_without_images_has_images_none_and_its_fields_as_torch(self):
        self.check(as_numpy=False)

    def test_output_conversion_refuses_a_feeder_without_images_naming_it(self):
        slab, payloads = slab_and_batch(1, images=False)
        f = HostFeeder(self.dir, [(0, 1)], slab=slab, batch=payloads.__getitem__, image=(0, 0, 0))
        f.start()
        with self.assertRaisesRegex(ValueError, "converts images; the feeder on %s serves batches "
                                                "without images: drop output=" % f.path):
            loader = SpindleLoader(f.path, 0, 1, as_numpy=True, token=TOKEN, timeout_s=10,
                                   output="float32-nchw", mean=(0.5,), std=(0.25,))
            self.addCleanup(loader.close)
            next(iter(loader))
