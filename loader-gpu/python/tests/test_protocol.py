"""Unit tests of the client's protocol layer: layouts, version and size checks, state helpers."""
import os
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import protocol as p  # noqa: E402
from spindle_bridge.client import _plan_identity, _resume_point, _run_token  # noqa: E402
from spindle_bridge.client import SpindleLoader, _map_shared, merge_states  # noqa: E402


def welcome_payload(state="", end_batch=12):
    return (struct.pack("<iiqB", 1, 2, 7, p.MEMORY_SHM) + p.string("/dev/shm/x")
            + struct.pack("<qBiiii", 4096, 0, 28, 28, 1, 64) + p.string(state)
            + struct.pack("<q", end_batch))


class ProtocolTest(unittest.TestCase):
    def pair(self, data):
        a, b = socket.socketpair()
        a.sendall(data)
        a.close()
        self.addCleanup(b.close)
        return b

    def test_hello_layout_is_token_rank_world_resume_device_plan_pid(self):
        f = p.hello("t0k3n-0123456789", 1, 2, 5, "cpu", "format=x\nseed=3", 4242)
        magic, version, t, n = p.HEADER.unpack(f[:12])
        self.assertEqual((magic, version, t, n),
                         (b"SPDL", 6, p.HELLO, 4 + 16 + 4 + 4 + 8 + 4 + 3 + 4 + 15 + 4))
        r = p.Reader(f[12:])
        self.assertEqual((r.string(), r.i32(), r.i32(), r.i64(), r.string(), r.string(),
                          r.i32()), ("t0k3n-0123456789", 1, 2, 5, "cpu", "format=x\nseed=3", 4242))
        self.assertEqual(r.at, n)

    def test_a_states_plan_identity_is_every_field_but_the_current_legs_counts(self):
        state = {"format": "spindle-loader-state/1",
                 "manifest": {"sha256": "cd" * 32, "shards": 3, "samples": 90},
                 "seed": -42, "epoch": 4, "batchSize": 8, "remainder": "DROP_LAST",
                 "shuffleWindow": 64, "worldSize": 2, "batchesConsumed": [5, 6],
                 "earlierLegs": [{"worldSize": 3, "batchesConsumed": [1, 2, 3]},
                                 {"worldSize": 1, "batchesConsumed": [0]}]}
        identity = ("format=spindle-loader-state/1\nmanifest.sha256=" + "cd" * 32
                    + "\nseed=-42\nepoch=4\nbatchSize=8\nremainder=DROP_LAST\n"
                    "shuffleWindow=64\nworldSize=2\nearlierLegs=3:1,2,3;1:0")
        self.assertEqual(_plan_identity(state), identity)
        state["batchesConsumed"] = [7, 7]  # progress in the current leg: the same plan
        self.assertEqual(_plan_identity(state), identity)
        self.assertEqual(_plan_identity(None), "")

    def test_missing_or_odd_fields_of_a_state_are_empty_in_its_plan_identity(self):
        self.assertEqual(_plan_identity({"worldSize": 1, "batchesConsumed": [1]}),
                         "format=\nmanifest.sha256=\nseed=\nepoch=\nbatchSize=\nremainder=\n"
                         "shuffleWindow=\nworldSize=1\nearlierLegs=")
        odd = _plan_identity({"manifest": "x", "seed": 1.5, "epoch": True, "batchSize": None,
                              "earlierLegs": [{"worldSize": 2, "batchesConsumed": [1, "a"]}, 3]})
        self.assertEqual(odd, "format=\nmanifest.sha256=\nseed=\nepoch=\nbatchSize=\n"
                              "remainder=\nshuffleWindow=\nworldSize=\nearlierLegs=2:1,a;:")

    def test_the_token_comes_from_the_argument_else_the_environment(self):
        old = os.environ.pop("SPINDLE_RUN_TOKEN", None)
        self.addCleanup(lambda: old is None or os.environ.__setitem__("SPINDLE_RUN_TOKEN", old))
        self.assertEqual(_run_token("a" * 16, "/x.sock"), "a" * 16)
        with self.assertRaisesRegex(ValueError, r"no run token for /x.sock: pass token=\.\.\. or "
                                    r"set SPINDLE_RUN_TOKEN \(the feeder writes it to "
                                    r"/x.sock.token\)"):
            _run_token(None, "/x.sock")
        os.environ["SPINDLE_RUN_TOKEN"] = "b" * 16
        self.assertEqual(_run_token(None, "/x.sock"), "b" * 16)
        self.assertEqual(p.ERRORS[10], "BAD_TOKEN")

    def test_the_token_is_taken_without_the_newline_of_the_token_file(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "bridge.sock.token")
        with open(path, "w") as f:
            f.write("c" * 64 + "\n")  # as the feeder writes it
        with open(path) as f:
            self.assertEqual(_run_token(f.read(), "/x.sock"), "c" * 64)
        old = os.environ.get("SPINDLE_RUN_TOKEN")
        self.addCleanup(lambda: os.environ.pop("SPINDLE_RUN_TOKEN") if old is None
                        else os.environ.__setitem__("SPINDLE_RUN_TOKEN", old))
        os.environ["SPINDLE_RUN_TOKEN"] = " " + "d" * 16 + "\r\n"
        self.assertEqual(_run_token(None, "/x.sock"), "d" * 16)
        with self.assertRaisesRegex(ValueError, "no run token"):
            _run_token("\n", "/x.sock")

    def test_welcome_round_trips(self):
        w = p.parse_welcome(welcome_payload('{"a": 1}'))
        self.assertEqual((w["rank"], w["world_size"], w["position"], w["path"], w["size"]),
                         (1, 2, 7, "/dev/shm/x", 4096))
        self.assertEqual((w["dtype"], w["height"], w["max_rows"], w["loader_state"]),
                         ("uint8", 28, 64, '{"a": 1}'))
        self.assertEqual(w["end_batch"], 12)
        self.assertEqual(p.parse_welcome(welcome_payload(end_batch=-1))["end_batch"], -1)

    def test_batch_round_trips_with_indices_weights_and_keys(self):
        payload = (struct.pack("<qiBB", 5, 2, 0, 2) + struct.pack("<qq", 2, 3)
                   + struct.pack("<qqqBH", 256, 6, 512, 0, 0) + struct.pack("<qq", 10, 11)
                   + struct.pack("<ff", 1.0, 0.0) + p.string("k-é") + p.string("k2"))
        b = p.parse_batch(payload)
        self.assertEqual((b["batch"], b["rows"], b["shape"], b["image_offset"]), (5, 2, (2, 3), 256))
        self.assertEqual((b["indices"], b["weights"], b["keys"]),
                         ([10, 11], [1.0, 0.0], ["k-é", "k2"]))

    def test_cuda_ipc_welcome_carries_ordinal_64_handle_bytes_and_size(self):
        handle = bytes(range(1, 65))
        payload = (struct.pack("<iiqB", 0, 1, 3, p.MEMORY_CUDA_IPC) + struct.pack("<i", 2)
                   + handle + struct.pack("<q", 1 << 30)
                   + struct.pack("<BiiiI", 0, 4, 4, 3, 16) + p.string("")
                   + struct.pack("<q", -1))
        w = p.parse_welcome(payload)
        self.assertEqual((w["memory"], w["device"], w["ipc_handle"], w["size"]),
                         (p.MEMORY_CUDA_IPC, 2, handle, 1 << 30))
        self.assertEqual((w["dtype"], w["channels"], w["max_rows"], w["position"]),
                         ("uint8", 3, 16, 3))
        with self.assertRaisesRegex(p.ProtocolError, "too short"):
            p.parse_welcome(payload[:17 + 40])  # handle cut short

    def test_unknown_memory_kind_is_refused(self):
        with self.assertRaisesRegex(p.ProtocolError, "unknown memory kind 3"):
            p.parse_welcome(struct.pack("<iiqB", 0, 1, 0, 3))

    def test_batch_with_ipc_event_carries_64_event_bytes(self):
        payload = (struct.pack("<qiBB", 1, 1, 0, 1) + struct.pack("<q", 4)
                   + struct.pack("<qqqB", 0, 4, 256, 1) + b"\x07" * 64 + struct.pack("<H", 0)
                   + struct.pack("<q", 9) + struct.pack("<f", 0.0) + p.string("k"))
        b = p.parse_batch(payload)
        self.assertEqual((b["event"], b["ipc_event"], b["indices"], b["weights"]),
                         (1, b"\x07" * 64, [9], [0.0]))

    def test_truncated_message_is_refused(self):
        with self.assertRaisesRegex(p.ProtocolError, "too short"):
            p.parse_welcome(welcome_payload()[:10])

    def test_other_version_is_refused_with_both_versions_named(self):
        with self.assertRaisesRegex(p.ProtocolError, "version 1, this client version 6: use the"):
            p.read_frame(self.pair(p.frame(p.WELCOME, b"", version=1)))

    def test_bad_magic_and_oversized_payload_are_refused(self):
        with self.assertRaisesRegex(p.ProtocolError, "bad magic"):
            p.read_frame(self.pair(b"HTTP" + b"\0" * 8))
        with self.assertRaises(p.ProtocolError) as e:
            p.read_frame(self.pair(p.HEADER.pack(b"SPDL", p.VERSION, p.BATCH,
                                                 p.MAX_PAYLOAD + 1)))
        self.assertEqual(e.exception.code, "TOO_LARGE")
        self.assertEqual(str(e.exception), "TOO_LARGE: BATCH message of 1048577 bytes exceeds "
                                           "the protocol's frame limit of 1048576 bytes")

    def test_error_message_raises_with_its_code(self):
        err = p.frame(p.ERROR, struct.pack("<H", 5) + p.string("Rank 0 already has a trainer"))
        with self.assertRaisesRegex(p.ProtocolError, "RANK_TAKEN: Rank 0 already"):
            p.read_frame(self.pair(err))

    def set_env(self, env):
        """Sets ``env`` in os.environ until the test ends."""
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)

        def restore():
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.addCleanup(restore)

    def refusing_feeder(self, path, delay_s, hellos):
        """A feeder that binds ``path`` after ``delay_s``, records one HELLO, refuses it."""
        def run():
            time.sleep(delay_s)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(1)
            conn, _ = server.accept()
            t, payload = p.read_frame(conn)
            r = p.Reader(payload)
            hellos.append((t, r.string(), r.i32(), r.i32(), r.i64(), r.string(), r.string(),
                           r.i32()))
            conn.sendall(p.frame(p.ERROR, struct.pack("<H", 10) + p.string("not this run")))
            conn.close()
            server.close()
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def test_connect_retries_while_the_feeder_starts(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "bridge.sock")
        hellos = []
        t = self.refusing_feeder(path, 0.4, hellos)
        with self.assertRaisesRegex(p.ProtocolError, "BAD_TOKEN: not this run"):
            SpindleLoader(path, 1, 2, as_numpy=True, token="t" * 16, timeout_s=10)
        t.join(10)
        self.assertEqual(hellos, [(p.HELLO, "t" * 16, 1, 2, -1, "cpu", "", os.getpid())])

    def busy_feeder(self, path, busy, hellos):
        """A feeder that answers BUSY to its first ``busy`` connections at once (as the bridge
        does past its connection cap: an ERROR before reading anything, then close), then
        records the next one's HELLO and refuses it with BAD_TOKEN (``busy=None``: BUSY always)."""
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(8)
        self.addCleanup(server.close)
        refused = []

        def run():
            while busy is None or len(refused) < busy:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return  # closed by the test
                conn.sendall(p.frame(p.ERROR, struct.pack("<H", 11) + p.string(
                    "Invalid connection: this bridge has its maximum of 1 connections open")))
                conn.shutdown(socket.SHUT_WR)
                conn.settimeout(0.2)  # drop what the peer sent, as the bridge does: a close
                try:                  # with unread input would reset the connection
                    while conn.recv(1 << 16):
                        pass
                except OSError:
                    pass
                conn.close()
                refused.append(time.monotonic())
            conn, _ = server.accept()
            t, payload = p.read_frame(conn)
            r = p.Reader(payload)
            hellos.append((r.string(), r.i32(), r.i32()))
            conn.sendall(p.frame(p.ERROR, struct.pack("<H", 10) + p.string("not this run")))
            conn.close()
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t, refused

    def test_busy_is_retried_with_back_off_until_the_feeder_takes_the_hello(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "bridge.sock")
        hellos = []
        t, refused = self.busy_feeder(path, 4, hellos)
        with self.assertRaisesRegex(p.ProtocolError, "BAD_TOKEN: not this run"):
            SpindleLoader(path, 1, 2, as_numpy=True, token="t" * 16, timeout_s=30)
        t.join(10)
        self.assertEqual(len(refused), 4)
        self.assertEqual(hellos, [("t" * 16, 1, 2)])  # the HELLO after four BUSY answers

    def test_busy_past_the_timeout_is_raised_naming_the_retries(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "bridge.sock")
        t, refused = self.busy_feeder(path, None, [])
        with self.assertRaisesRegex(p.ProtocolError, r"^BUSY: Invalid connection: this bridge has "
                                    r"its maximum of 1 connections open; still refused after "
                                    r"retrying for 0\.6 s \(the loader's timeout_s\)$"):
            SpindleLoader(path, 0, 1, as_numpy=True, token="t" * 16, timeout_s=0.6)
        self.assertGreater(len(refused), 1)

    def test_connect_gives_up_after_the_timeout_naming_the_socket(self):
        path = os.path.join(tempfile.gettempdir(), "spindle-none-%d.sock" % os.getpid())
        started = time.monotonic()
        with self.assertRaisesRegex(ConnectionError, "no Spindle feeder listening on %s within "
                                    "0.3 s" % path):
            SpindleLoader(path, 0, 1, as_numpy=True, token="t" * 16, timeout_s=0.3)
        self.assertLess(time.monotonic() - started, 5)

    def test_from_env_reads_rank_world_socket_token_device_and_state(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "bridge.sock")
        state = os.path.join(d.name, "state.json")
        with open(state, "w") as f:
            f.write('{"worldSize": 2, "batchesConsumed": [3, 5]}')
        env = {"RANK": "1", "WORLD_SIZE": "2", "SPINDLE_SOCKET": path, "SPINDLE_RUN_TOKEN":
               "e" * 16, "SPINDLE_STATE": state, "SPINDLE_TIMEOUT_S": "10"}
        self.set_env(env)
        hellos = []
        t = self.refusing_feeder(path, 0, hellos)
        with self.assertRaisesRegex(p.ProtocolError, "BAD_TOKEN"):
            SpindleLoader.from_env(as_numpy=True)
        t.join(10)
        self.assertEqual(hellos[0][1:5], ("e" * 16, 1, 2, 5))  # rank 1's entry of the state
        del os.environ["RANK"]
        with self.assertRaisesRegex(ValueError, "RANK not set"):
            SpindleLoader.from_env()

    def test_shared_memory_is_mapped_only_when_it_is_the_announced_file(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(bytes(range(8)))
            f.flush()
            m = _map_shared(f.name, 8)
            self.assertEqual(m[:], bytes(range(8)))
            m.close()
            with self.assertRaisesRegex(p.ProtocolError, "is not a file of 16 bytes"):
                _map_shared(f.name, 16)
        with self.assertRaisesRegex(p.ProtocolError, "cannot open the feeder's shared memory "
                                    "/proc/1/fd/999999"):
            _map_shared("/proc/1/fd/999999", 8)

    def test_resume_point_comes_from_this_ranks_entry(self):
        self.assertEqual(_resume_point(None, 0), -1)
        self.assertEqual(_resume_point({"batchesConsumed": [3, 4]}, 1), 4)
        with self.assertRaisesRegex(ValueError, "Invalid rank: 2"):
            _resume_point({"batchesConsumed": [3, 4]}, 2)

    def test_merge_states_takes_each_ranks_own_count(self):
        s0 = {"seed": 1, "batchesConsumed": [5, 0]}
        s1 = {"seed": 1, "batchesConsumed": [0, 6]}
        self.assertEqual(merge_states([s0, s1]), {"seed": 1, "batchesConsumed": [5, 6]})


if __name__ == "__main__":
    unittest.main()
