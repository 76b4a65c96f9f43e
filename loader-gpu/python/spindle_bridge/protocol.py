"""Framing and message layouts of the Spindle bridge protocol, version 6 (see PROTOCOL.md).

Every integer is little-endian. A frame is a 12-byte header ``b"SPDL", u16 version, u16 type,
u32 payload length`` followed by the payload. Strings are ``u32 byte length + UTF-8``.
"""
import struct

VERSION = 6
MAGIC = b"SPDL"
HEADER = struct.Struct("<4sHHI")
_U32 = struct.Struct("<I")
MAX_PAYLOAD = 1 << 20

HELLO, WELCOME, NEXT, BATCH, RELEASE, END, TIMEOUT, ERROR, BYE = range(1, 10)
NAMES = {HELLO: "HELLO", WELCOME: "WELCOME", NEXT: "NEXT", BATCH: "BATCH", RELEASE: "RELEASE",
         END: "END", TIMEOUT: "TIMEOUT", ERROR: "ERROR", BYE: "BYE"}

ERRORS = {1: "MALFORMED", 2: "BAD_VERSION", 3: "TOO_LARGE", 4: "BAD_RANK", 5: "RANK_TAKEN",
          6: "BAD_RESUME", 7: "UNEXPECTED", 8: "FEEDER_FAILED", 9: "UNSUPPORTED_DEVICE",
          10: "BAD_TOKEN", 11: "BUSY"}

DTYPES = {0: "uint8", 1: "float16", 2: "float32"}
#: Element types of an extra field's values (BATCH's field table), by code.
FIELD_DTYPES = {0: "int32", 1: "int64", 2: "float32", 3: "float64", 4: "uint8"}
#: How an extra field's rows lie: one value each, a list (values + offsets), UTF-8 text.
FIXED, LIST, STRING = 0, 1, 2
FIELD_KINDS = {FIXED: "fixed", LIST: "list", STRING: "string"}
MEMORY_SHM = 1
MEMORY_CUDA_IPC = 2


class ProtocolError(Exception):
    """The peer broke the protocol, or the feeder refused this trainer (``code`` names why)."""

    def __init__(self, message, code=None):
        super().__init__(message if code is None else "%s: %s" % (code, message))
        self.code = code
        self.detail = message  # without the code


def frame(msg_type, payload=b"", version=VERSION):
    return HEADER.pack(MAGIC, version, msg_type, len(payload)) + payload


def read_exact(sock, n):
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ConnectionError("feeder closed the connection (%d of %d bytes read)" % (got, n))
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(sock):
    """Returns (type, payload). Raises ProtocolError on a bad header, and on ERROR messages."""
    magic, version, msg_type, length = HEADER.unpack(read_exact(sock, HEADER.size))
    if magic != MAGIC:
        raise ProtocolError("not a Spindle bridge: bad magic %r" % magic)
    if version != VERSION:
        raise ProtocolError("feeder speaks protocol version %d, this client version %d: use the "
                            "spindle_bridge client of the feeder's Spindle release"
                            % (version, VERSION), "BAD_VERSION")
    if length > MAX_PAYLOAD:
        raise ProtocolError("%s message of %d bytes exceeds the protocol's frame limit of %d bytes"
                            % (NAMES.get(msg_type, "type %d" % msg_type), length, MAX_PAYLOAD),
                            "TOO_LARGE")
    payload = read_exact(sock, length) if length else b""
    if msg_type == ERROR:
        reader = Reader(payload)
        code = reader.u16()
        raise ProtocolError(reader.string(), ERRORS.get(code, "ERROR %d" % code))
    return msg_type, payload


def string(s):
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def hello(token, rank, world_size, resume_from, device, plan="", pid=0):
    """HELLO: the run token, then rank, world size, resume point and device, then the plan
    identity of the loader state resumed from ("" without a state; client._plan_identity), then
    the trainer's process id (for the feeder's messages; 0 = not stated)."""
    return frame(HELLO, string(token) + struct.pack("<iiq", rank, world_size, resume_from)
                 + string(device) + string(plan) + struct.pack("<i", pid))


def next_request(timeout_ms):
    return frame(NEXT, struct.pack("<q", timeout_ms))


def release(batch):
    return frame(RELEASE, struct.pack("<q", batch))


class Reader:
    """Reads fields off a payload, refusing to read past its end."""

    def __init__(self, payload):
        self.b, self.at = payload, 0

    def take(self, fmt):
        s = struct.calcsize(fmt)
        if self.at + s > len(self.b):
            raise ProtocolError("message too short: %d bytes" % len(self.b))
        v = struct.unpack_from(fmt, self.b, self.at)
        self.at += s
        return v if len(v) > 1 else v[0]

    def u8(self):
        return self.take("<B")

    def u16(self):
        return self.take("<H")

    def i32(self):
        return self.take("<i")

    def i64(self):
        return self.take("<q")

    def f32s(self, n):
        return self._many("f", n)

    def i64s(self, n):
        return self._many("q", n)

    def _many(self, code, n):
        """``n`` values of one struct ``code`` as a list, unpacked at once (a batch's rows)."""
        if n < 0:
            raise ProtocolError("negative count %d" % n)
        v = self.take("<%d%s" % (n, code)) if n else ()
        return list(v) if n != 1 else [v]

    def string(self):
        n = self.take("<I")
        if self.at + n > len(self.b):
            raise ProtocolError("string of %d bytes past the end of the message" % n)
        try:
            s = self.b[self.at:self.at + n].decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProtocolError("string at byte %d is not UTF-8: %s" % (self.at, e)) from None
        self.at += n
        return s

    def strings(self, n):
        """``n`` strings (a batch's keys): :meth:`string` ``n`` times, in one tight loop."""
        out, b, at, size, length = [], self.b, self.at, len(self.b), _U32.unpack_from
        for _ in range(n):
            if at + 4 > size:
                raise ProtocolError("message too short: %d bytes" % size)
            k = length(b, at)[0]
            at += 4
            if at + k > size:
                raise ProtocolError("string of %d bytes past the end of the message" % k)
            try:
                out.append(b[at:at + k].decode("utf-8"))
            except UnicodeDecodeError as e:
                raise ProtocolError("string at byte %d is not UTF-8: %s" % (at, e)) from None
            at += k
        self.at = at
        return out

    def dtype(self):
        code = self.u8()
        if code not in DTYPES:
            raise ProtocolError("unknown dtype code %d" % code)
        return DTYPES[code]


def parse_welcome(payload):
    r = Reader(payload)
    w = {"rank": r.i32(), "world_size": r.i32(), "position": r.i64(), "memory": r.u8()}
    if w["memory"] == MEMORY_SHM:
        w["path"] = r.string()
        w["size"] = r.i64()
    elif w["memory"] == MEMORY_CUDA_IPC:
        w["device"] = r.i32()
        w["ipc_handle"] = r.take("<64s")
        w["size"] = r.i64()
    else:
        raise ProtocolError("unknown memory kind %d" % w["memory"])
    w["dtype"] = r.dtype()
    w["height"], w["width"], w["channels"], w["max_rows"] = r.i32(), r.i32(), r.i32(), r.i32()
    w["loader_state"] = r.string()
    w["end_batch"] = r.i64()
    return w


def parse_batch(payload):
    r = Reader(payload)
    b = {"batch": r.i64(), "rows": r.i32(), "dtype": r.dtype()}
    if b["rows"] < 0:
        raise ProtocolError("negative row count %d" % b["rows"])
    ndim = r.u8()
    b["shape"] = tuple(r.i64() for _ in range(ndim))
    b["image_offset"], b["image_bytes"], b["labels_offset"] = r.i64(), r.i64(), r.i64()
    b["event"] = r.u8()
    if b["event"]:
        b["ipc_event"] = r.take("<64s")
    b["fields"] = [_field(r, b["rows"]) for _ in range(r.u16())]
    b["indices"] = r.i64s(b["rows"])
    b["weights"] = r.f32s(b["rows"])
    b["keys"] = r.strings(b["rows"])
    return b


def _field(r, rows):
    """One entry of BATCH's field table: name, dtype, kind, then where its values (and, for a
    variable field, its ``rows + 1`` int32 offsets) lie, checked against the row count."""
    f = {"name": r.string()}
    dtype, kind = r.u8(), r.u8()
    if dtype not in FIELD_DTYPES or kind not in FIELD_KINDS or \
            (kind == STRING and FIELD_DTYPES[dtype] != "uint8"):
        raise ProtocolError("field %r: unknown dtype %d or kind %d" % (f["name"], dtype, kind))
    f["dtype"], f["kind"] = FIELD_DTYPES[dtype], kind
    f["values_offset"], f["values_bytes"] = r.i64(), r.i64()
    f["offsets_offset"], f["offsets_bytes"] = r.i64(), r.i64()
    width = {"int32": 4, "int64": 8, "float32": 4, "float64": 8, "uint8": 1}[f["dtype"]]
    if f["values_offset"] < 0 or f["values_bytes"] < 0 or f["values_bytes"] % width or \
            (kind == FIXED and f["values_bytes"] != rows * width) or \
            (kind != FIXED and (f["offsets_offset"] < 0 or f["offsets_bytes"] != 4 * (rows + 1))):
        raise ProtocolError("field %r of a %d-row batch: %d value bytes at %d, %d offset bytes at "
                            "%d do not describe its %s rows"
                            % (f["name"], rows, f["values_bytes"], f["values_offset"],
                               f["offsets_bytes"], f["offsets_offset"], FIELD_KINDS[kind]))
    return f
