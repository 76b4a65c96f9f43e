/**
 * The trainer bridge: serves a node's feeders to PyTorch trainer processes over a Unix-domain
 * socket, without copying batches.
 *
 * <pre>
 *  GpuFeeder per rank (SharedMemoryDevice: device slab = an unlinked /dev/shm file, opened by
 *     │               trainers through /proc/PID/fd/N;
 *     │               CUDA device: device slab exported once as a CUDA IPC handle)
 *     │ DeviceBatch leases         ServedMemory: kind 1 (file) | kind 2 (IPC)
 *     ▼
 *  BridgeServer ── ConnectionAcceptor (accept thread; BUSY past the cap)
 *                    ──► TrainerSession per connection (own thread)
 *     HELLO(token, rank, world, resume, device, plan identity of the state, trainer pid)
 *       ─► checkToken(RunToken, else BAD_TOKEN) ─► ServedRanks.forHello: RankChannel
 *          (ResumeCheck; LateRanks for ranks served later) ─► claim
 *       ─► WELCOME(memory, spec, state)
 *     NEXT ─► RankChannel.next ─► BATCH(offsets, shape, dtype, field table, plan indices, keys)
 *     RELEASE(batch) ─► DeviceBatch.close ─► slot back to the ring
 *     disconnect ─► held batches revoked ─► RankChannel pending ─► the rank's next trainer
 * </pre>
 *
 * <p>What enters: feeders (one per rank served on this node) and trainer connections. What leaves:
 * batch descriptors (offsets into the slab the trainer mapped or opened once). Only {@code
 * dev.spindle.gpu.cuda} touches JCuda: the bridge sees a CUDA slab as a device-neutral {@link
 * dev.spindle.gpu.device.IpcExport}. Threads: one accept thread (which refuses connections past the
 * cap itself), one thread per connection (at most the cap), one handshake timer that drops peers
 * without a HELLO in time; feeders' own threads are unchanged. The protocol is specified in {@code
 * loader-gpu/python/PROTOCOL.md}; {@link dev.spindle.gpu.bridge.Wire} is its framing.
 */
package dev.spindle.gpu.bridge;
