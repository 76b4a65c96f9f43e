package org.rapaio.jupyter.kernel.channels;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Spindle's replacement for {@code LoopThread} of rapaio-jupyter-kernel 3.0.1 (the latest release),
 * compiled by {@code bin/notebooks install} and put before the kernel's jar on its classpath.
 *
 * <p>The kernel runs each ZeroMQ channel (shell, control, stdin, heartbeat) on one of these
 * threads, which runs its body, sleeps, and runs it again while it is running. The original sets
 * its running flag only after {@link Thread#start()} returns, so a thread that the scheduler runs
 * at once reads the flag still false and ends before its first poll: that channel never answers,
 * and the client's first request times out ("Kernel didn't respond", about one start in four
 * here, more under load). This one is running from its construction. A body that throws (the
 * shell loop reads its message handlers before the kernel has registered them: a {@code
 * NullPointerException} on a request that arrives that early) loses that message, which the
 * client sends again, instead of ending the channel's thread.
 */
public final class LoopThread extends Thread {
  private static final Logger LOG = Logger.getLogger(LoopThread.class.getSimpleName());

  private volatile boolean running = true;
  private final long sleepMs;
  private final Runnable body;

  public LoopThread(String name, long sleepMs, Runnable body) {
    super(name);
    this.sleepMs = sleepMs;
    this.body = body;
  }

  @Override
  public void run() {
    while (running) {
      try {
        body.run();
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, getName() + ": one turn of the channel's loop failed", e);
      }
      try {
        Thread.sleep(sleepMs);
      } catch (InterruptedException e) {
        running = false;
        return;
      }
    }
  }

  /** Ends the loop after its current turn. */
  public void shutdown() {
    running = false;
  }
}
