package dev.spindle.gpu.bridge;

/** Error codes of the bridge's ERROR message (values are part of the protocol). */
enum BridgeError {
  MALFORMED(1),
  BAD_VERSION(2),
  TOO_LARGE(3),
  BAD_RANK(4),
  RANK_TAKEN(5),
  BAD_RESUME(6),
  UNEXPECTED(7),
  FEEDER_FAILED(8),
  UNSUPPORTED_DEVICE(9),
  BAD_TOKEN(10),
  BUSY(11);

  final int code;

  BridgeError(int code) {
    this.code = code;
  }
}
