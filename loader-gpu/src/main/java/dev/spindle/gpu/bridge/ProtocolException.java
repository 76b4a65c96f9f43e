package dev.spindle.gpu.bridge;

/** A peer broke the protocol or asked for something refused; sent back as an ERROR message. */
final class ProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  final BridgeError error;

  ProtocolException(BridgeError error, String message) {
    super(message);
    this.error = error;
  }
}
