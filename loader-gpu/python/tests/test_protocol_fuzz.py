"""Property tests (Hypothesis) of the client's protocol parser: whatever bytes a feeder (or
anything listening on its socket) sends, read_frame, parse_welcome and parse_batch return a
result or raise ProtocolError (or ConnectionError when the stream ends mid-frame), never another
exception, and each call ends within the deadline. Inputs are arbitrary bytes and mutations of
valid frames. SPINDLE_FUZZ_EXAMPLES sets the examples per property (default 300, for CI); the
@example inputs are those earlier runs failed on.
"""
import os
import struct
import sys
import unittest

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge import protocol as p  # noqa: E402

EXAMPLES = int(os.environ.get("SPINDLE_FUZZ_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=2000, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
ALLOWED = (p.ProtocolError, ConnectionError)


class BytesSocket:
    """recv() from a byte string, in the chunk sizes given (a real socket may split anywhere)."""

    def __init__(self, data, chunks=(7, 1, 4096)):
        self.data, self.at, self.chunks, self.calls = data, 0, chunks, 0

    def recv(self, n):
        size = min(n, self.chunks[self.calls % len(self.chunks)])
        self.calls += 1
        out = self.data[self.at:self.at + size]
        self.at += len(out)
        return out


def welcome(state="", memory=p.MEMORY_SHM, dtype=0):
    head = struct.pack("<iiqB", 0, 1, 0, memory)
    block = (p.string("/dev/shm/spindle-0") + struct.pack("<q", 4096) if memory == p.MEMORY_SHM
             else struct.pack("<i64sq", 0, b"h" * 64, 4096))
    return (head + block + struct.pack("<Biiii", dtype, 28, 28, 1, 64) + p.string(state)
            + struct.pack("<q", -1))


def batch(rows=2, event=0):
    b = struct.pack("<qiBB", 3, rows, 2, 4) + struct.pack("<4q", rows, 3, 28, 28)
    b += struct.pack("<qqqB", 0, rows * 3 * 28 * 28 * 4, 4096, event)
    if event:
        b += b"e" * 64
    b += struct.pack("<H", 0)
    b += struct.pack("<%dq" % rows, *range(rows)) + struct.pack("<%df" % rows, *[1.0] * rows)
    return b + b"".join(p.string("key-%d" % i) for i in range(rows))


def mutated(valid):
    """A valid payload with bytes overwritten, inserted or cut."""
    return st.tuples(st.integers(0, len(valid)), st.binary(max_size=16), st.integers(0, 16)).map(
        lambda t: valid[:t[0]] + t[1] + valid[t[0] + t[2]:])


PAYLOADS = st.one_of(st.binary(max_size=512), mutated(welcome()), mutated(welcome("{}", 2, 1)),
                     mutated(batch()), mutated(batch(1, 1)), mutated(batch(0)))


class ProtocolFuzzTest(unittest.TestCase):
    def parse(self, parser, payload):
        try:
            return parser(payload)
        except ALLOWED:
            return None

    @SETTINGS
    @given(PAYLOADS)
    @example(struct.pack("<iiqBi", 0, 1, 0, 1, 2) + b"\xff\xfe" + b"\0" * 40)  # not UTF-8
    @example(welcome(dtype=9))  # an unknown dtype code
    def test_parse_welcome_returns_or_refuses(self, payload):
        w = self.parse(p.parse_welcome, payload)
        if w is not None:
            self.assertIn(w["dtype"], p.DTYPES.values())

    @SETTINGS
    @given(PAYLOADS)
    @example(batch(0))  # no rows: no weights to unpack
    @example(batch(2)[:8] + struct.pack("<i", -3) + batch(2)[12:])  # a negative row count
    @example(batch(1)[:12] + b"\x07" + batch(1)[13:])  # an unknown dtype code
    def test_parse_batch_returns_or_refuses(self, payload):
        b = self.parse(p.parse_batch, payload)
        if b is not None:
            self.assertEqual(len(b["indices"]), b["rows"])
            self.assertEqual(len(b["weights"]), b["rows"])
            self.assertEqual(len(b["keys"]), b["rows"])

    @SETTINGS
    @given(st.one_of(
        st.binary(max_size=64),
        st.tuples(st.integers(0, 11), PAYLOADS, st.integers(-4, 4), st.sampled_from([3, 4, 5]))
        .map(lambda t: p.frame(t[0], t[1], t[3])[:max(0, len(t[1]) + 12 + min(t[2], 0))]
             + b"\0" * max(t[2], 0)),
        PAYLOADS.map(lambda b: p.frame(p.ERROR, b))))
    @example(p.frame(p.ERROR, struct.pack("<HI", 1, 2) + b"\xc3\x28"))  # an ERROR not in UTF-8
    def test_read_frame_returns_or_refuses(self, data):
        try:
            msg_type, payload = p.read_frame(BytesSocket(data))
        except ALLOWED:
            return
        self.assertNotEqual(msg_type, p.ERROR)
        self.assertLessEqual(len(payload), p.MAX_PAYLOAD)


if __name__ == "__main__":
    unittest.main()
