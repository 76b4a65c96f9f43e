package dev.spindle.spark.sink;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where a pid means something: the host name, the kernel's boot ({@code
 * /proc/sys/kernel/random/boot_id}, random per boot and per machine, the same inside every
 * container of that kernel) and the PID namespace ({@code /proc/self/ns/pid}, e.g. {@code
 * pid:[4026531836]}). Two processes that agree on all three see the same pids; a host name alone
 * proves nothing (containers with host networking, Kubernetes {@code hostNetwork}, share it across
 * PID namespaces), so {@link OutputLock} looks at a lock holder's pid only when {@link
 * #certainlySame} holds. Where {@code /proc} is missing (macOS, Windows) the boot and namespace are
 * null and nothing is certain. Immutable; any thread.
 *
 * @param host this machine's name as locks record it
 * @param bootId the kernel's boot id, or null where unknown
 * @param pidNamespace the PID namespace's identity, or null where unknown
 */
record ProcessSpace(String host, String bootId, String pidNamespace) {
  /**
   * Test only, a JVM system property: the PID namespace this JVM records in its locks, so that a
   * test can run a driver that other JVMs on this machine take for one in another namespace.
   */
  static final String PID_NAMESPACE_PROPERTY = "spindle.test.pidNamespace";

  private static final ProcessSpace CURRENT =
      new ProcessSpace(
          hostName(),
          read(() -> Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim()),
          System.getProperty(
              PID_NAMESPACE_PROPERTY,
              read(() -> Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString())));

  /** This JVM's. */
  static ProcessSpace current() {
    return CURRENT;
  }

  /**
   * True only when both are known and equal in host, boot and PID namespace. Namespace ids are
   * unique among the namespaces alive on one boot; one that was freed may be reused, but then the
   * process recorded in it is gone as well, so a pid found missing here is missing there too.
   */
  boolean certainlySame(ProcessSpace other) {
    return bootId != null
        && pidNamespace != null
        && host.equals(other.host)
        && bootId.equals(other.bootId)
        && pidNamespace.equals(other.pidNamespace);
  }

  /** This machine's name as locks record it. */
  static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return Objects.requireNonNullElse(System.getenv("HOSTNAME"), "unknown-host");
    }
  }

  private interface Read {
    String run() throws IOException;
  }

  private static String read(Read read) {
    try {
      String value = read.run();
      return value.isEmpty() ? null : value;
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return null; // no /proc: no certainty, the lease alone decides
    }
  }
}
