package dev.spindle.gpu.bridge;

/**
 * A {@link BridgeServer}'s counters since start, and connections open now ({@link
 * BridgeServer#stats()}); immutable, any thread. {@code refused} counts ERRORs sent to peers and
 * peers dropped in their handshake.
 */
record BridgeStats(
    long trainersConnected,
    long refused,
    long batchesDelivered,
    long leasesRevoked,
    int connectionsOpen) {}
