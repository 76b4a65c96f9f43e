/**
 * The prefetch ring: a fixed set of reusable slots and the state machine that hands them from
 * fillers to the copy thread to consumers, modelled on the LMAX Disruptor.
 *
 * <pre>
 *   filler threads            copy thread (one per GPU)             consumers (trainers)
 *   claim ──► FILLING ──► publish ──► STAGED ──► takeStaged ──► COPYING
 *     ▲     (write host bytes)                   (H2D + event)      │ event complete
 *     │                                                             ▼
 *   FREE ◄──────────── release ◄──── LEASED ◄──── lease ◄────── READY
 * </pre>
 *
 * <p>Enters: slots claimed by filler threads. Leaves: {@link dev.spindle.gpu.ring.Lease}s held by
 * consumers. Threads: any number of fillers and consumers, one copy thread; all hand-offs go
 * through one lock, and each {@link dev.spindle.gpu.ring.Slot} changes state by compare-and-set so
 * a protocol error fails loudly. Fillers block when every slot is in use (bounded memory); leases
 * have deadlines, and an expired lease fails the ring instead of deadlocking it. Nothing here knows
 * about devices: the payload type is the caller's.
 *
 * <pre>
 *   PrefetchRing (public API: the lock, its conditions, blocking waits and timeouts)
 *     ├─ SlotSequencer   which slot goes to whom, every transition, sequence numbers
 *     ├─ RingRun         the ring's lifecycle: OPEN → ENDED → CLOSED, or FAILED (first cause)
 *     ├─ LeaseDeadlines  lease ids and deadlines; waits wake by the earliest deadline
 *     └─ RingStats       counters, read as a RingSnapshot
 *   WaitPolicy: how the copy thread idles while it polls a copy's completion (outside the lock)
 * </pre>
 */
package dev.spindle.gpu.ring;
