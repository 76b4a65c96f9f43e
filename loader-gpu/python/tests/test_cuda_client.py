"""The client's CUDA IPC path without a GPU: a fake feeder speaks memory kind 2 and a fake slab
stands in for the device, so the handshake, the views and the release discipline are checked."""
import os
import socket
import struct
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import client, cuda  # noqa: E402
from spindle_bridge import protocol as p  # noqa: E402

HANDLE = bytes(range(100, 164))
TOKEN = "test-token-0123456789"


class FakeFeeder(threading.Thread):
    """Serves one trainer: WELCOME kind 2 on `ordinal`, then `batches` batches, logging
    what the trainer sent into `log` (shared with the fake slab, so the order is visible)."""

    def __init__(self, path, log, batches, ordinal=0, event=0):
        super().__init__(daemon=True)
        self.log, self.batches, self.ordinal, self.event = log, batches, ordinal, event
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(1)
        self.hello = None
        self.error = None

    def run(self):
        try:
            conn, _ = self.server.accept()
            with conn:
                self.serve(conn)
        except Exception as e:  # noqa: BLE001 (reported by the test)
            self.error = e
        finally:
            self.server.close()

    def serve(self, conn):
        t, payload = p.read_frame(conn)
        r = p.Reader(payload)
        self.hello = (t, r.string(), r.i32(), r.i32(), r.i64(), r.string(), r.string())
        conn.sendall(p.frame(p.WELCOME, struct.pack("<iiqB", 0, 1, 0, p.MEMORY_CUDA_IPC)
                             + struct.pack("<i", self.ordinal) + HANDLE
                             + struct.pack("<q", 1 << 20)
                             + struct.pack("<Biiii", 0, 2, 2, 1, 4) + p.string("")
                             + struct.pack("<q", self.batches)))
        sent = 0
        while True:
            t, payload = p.read_frame(conn)
            if t == p.NEXT:
                if sent == self.batches:
                    conn.sendall(p.frame(p.END))
                    continue
                conn.sendall(p.frame(p.BATCH, batch(sent, self.event)))
                sent += 1
            elif t == p.RELEASE:
                self.log.append(("release", struct.unpack("<q", payload)[0]))
            elif t == p.BYE:
                self.log.append(("bye",))
                return


def batch(n, event=0):
    return (struct.pack("<qiBB", n, 2, 0, 4) + struct.pack("<qqqq", 2, 2, 2, 1)
            + struct.pack("<qqqB", 4096 * n, 8, 4096 * n + 256, event) + b"\xee" * 64 * event
            + struct.pack("<H", 0)
            + struct.pack("<qq", 2 * n, 2 * n + 1) + struct.pack("<ff", 1.0, 0.0)
            + p.string("a%d" % n) + p.string("b%d" % n))


class FakeFence:
    def __init__(self, log, n, done):
        self.log, self.n, self.is_done = log, n, done

    def done(self):
        return self.is_done

    def wait(self):
        self.log.append(("wait", self.n))


class FakeSlab:
    """Records calls; fence k is complete at once when k is in `done_at_once`."""

    def __init__(self, log, done_at_once):
        self.log, self.done_at_once, self.fences, self.base = log, done_at_once, 0, 0x7000

    def __call__(self, welcome, ordinal, torch, opener):
        self.log.append(("open", ordinal, welcome["ipc_handle"], opener))
        return self

    def views(self, d):
        return ("images@%d" % d["image_offset"], d["shape"]), ("labels@%d" % d["labels_offset"],)

    def to_device(self, host):
        return ("weights", host.tolist())

    def fence(self):
        n, self.fences = self.fences, self.fences + 1
        return FakeFence(self.log, n, n in self.done_at_once)

    def synchronize(self):
        self.log.append(("synchronize",))

    def close(self):
        self.log.append(("close",))


class CudaClientTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.path = os.path.join(self.dir.name, "bridge.sock")
        self.log = []
        self.patch("CudaSlab", FakeSlab(self.log, done_at_once={2}))
        self.patch("require_support", lambda ordinal, torch: None)

    def patch(self, name, value):
        old = getattr(client, name)
        setattr(client, name, value)
        self.addCleanup(setattr, client, name, old)

    def feeder(self, batches, ordinal=0, event=0):
        f = FakeFeeder(self.path, self.log, batches, ordinal, event)
        f.start()
        return f

    def test_hello_names_the_cuda_device_and_the_handle_is_opened_once(self):
        f = self.feeder(1)
        loader = client.SpindleLoader(self.path, 0, 1, device="cuda", as_numpy=True,
                                      ipc="driver", token=TOKEN)
        got = list(loader)
        loader.close()
        f.join(10)
        self.assertIsNone(f.error)
        self.assertEqual(f.hello, (p.HELLO, TOKEN, 0, 1, -1, "cuda:0", ""))
        self.assertEqual(self.log[0], ("open", 0, HANDLE, "driver"))
        self.assertEqual(got, [(("images@0", (2, 2, 2, 1)), ("labels@256",))])
        self.assertEqual(loader.last.image_offset, 0)
        self.assertEqual(loader.last.weights, ("weights", [1.0, 0.0]))  # on the device
        self.assertEqual(loader.memory_base, 0x7000)

    def test_batches_are_released_only_after_their_fence_and_at_most_one_waits(self):
        f = self.feeder(4)
        loader = client.SpindleLoader(self.path, 0, 1, device="cuda:0", as_numpy=True,
                                          token=TOKEN)
        for _ in loader:
            self.log.append(("got", loader.last.number))
        loader.close()
        f.join(10)
        self.assertIsNone(f.error)
        # This thread's order: fence 0 is waited on only once a second batch is held back; fence
        # 2 completed at once, so batch 2 goes right after batch 1; batch 3 (fence pending) goes
        # with BYE, after the device was synchronised; the handle is closed last.
        mine = [e for e in self.log[1:] if e[0] not in ("release", "bye")]
        self.assertEqual(mine, [("got", 0), ("got", 1), ("wait", 0), ("got", 2), ("wait", 1),
                                ("wait", 2), ("got", 3), ("synchronize",), ("close",)])
        # The feeder's order: releases 0..2, each after its fence, then BYE after synchronize.
        self.assertEqual([e[1] for e in self.log if e[0] == "release"], [0, 1, 2])
        for k in range(3):
            self.assertLess(self.log.index(("wait", k)), self.log.index(("release", k)))
        self.assertLess(self.log.index(("synchronize",)), self.log.index(("bye",)))

    def test_a_welcome_for_another_gpu_is_refused(self):
        f = self.feeder(0, ordinal=1)
        with self.assertRaisesRegex(p.ProtocolError, "cuda:1 to a trainer on cuda:0"):
            client.SpindleLoader(self.path, 0, 1, device="cuda:0", as_numpy=True,
                                          token=TOKEN)
        f.join(10)

    def test_a_batch_with_an_ipc_event_is_refused(self):
        f = self.feeder(1, event=1)
        loader = client.SpindleLoader(self.path, 0, 1, device="cuda:0", as_numpy=True,
                                          token=TOKEN)
        with self.assertRaisesRegex(p.ProtocolError, "batch 0 carries a CUDA IPC event"):
            next(iter(loader))
        loader.close()
        f.join(10)
        self.assertIsNone(f.error)


class CudaModuleTest(unittest.TestCase):
    def test_device_names(self):
        self.assertIsNone(cuda.parse_device("cpu", None))
        self.assertEqual(cuda.parse_device("cuda", None), 0)
        self.assertEqual(cuda.parse_device("cuda:3", None), 3)
        for bad in ("cuda:", "cuda:x", "cuda1", "cpux", "CPU", "", "cuda:-1", "cuda:1000"):
            with self.assertRaisesRegex(ValueError, "Invalid device"):
                cuda.parse_device(bad, None)

    def test_views_are_described_by_the_cuda_array_interface_v3(self):
        a = cuda._CudaArray(None, 0x10000 + 512, (2, 4, 4, 3), "uint8")
        self.assertEqual(a.__cuda_array_interface__, {
            "shape": (2, 4, 4, 3), "typestr": "|u1", "data": (0x10200, False),
            "strides": None, "version": 3})
        self.assertEqual(cuda._CudaArray(None, 8, (2,), "int64")
                         .__cuda_array_interface__["typestr"], "<i8")

    def test_an_unknown_opener_is_refused(self):
        with self.assertRaisesRegex(ValueError, "Invalid SPINDLE_CUDA_IPC: 'numba'"):
            cuda._open(HANDLE, 0, 1 << 20, None, "numba")

    @unittest.skipIf(os.path.exists("/dev/nvidia0"), "a GPU is present")
    def test_without_a_driver_the_error_names_every_opener_tried(self):
        with self.assertRaises(RuntimeError) as e:
            cuda._open(HANDLE, 0, 1 << 20, None, "auto")
        msg = str(e.exception)
        self.assertIn("cannot open the feeder's CUDA IPC handle (1048576 bytes on cuda:0)", msg)
        self.assertIn("cupy: not installed", msg)
        self.assertIn("driver: ", msg)

    def test_without_torch_or_cupy_the_loader_refuses_before_connecting(self):
        if cuda._cupy() is not None:
            self.skipTest("cupy is installed")
        with self.assertRaisesRegex(RuntimeError, "cuda:0 needs torch or cupy"):
            client.SpindleLoader("/nonexistent/bridge.sock", 0, 1, device="cuda:0",
                                 as_numpy=True)


if __name__ == "__main__":
    unittest.main()
