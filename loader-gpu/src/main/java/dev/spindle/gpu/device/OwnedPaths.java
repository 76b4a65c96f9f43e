package dev.spindle.gpu.device;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Checks that the private paths of a feeder (the shared memory directory, the bridge's socket
 * directory and socket) belong to this process's user, by numeric uid: the path's {@code unix:uid}
 * against this process's effective uid from {@code /proc/self/status}. No user names are compared,
 * so a uid without a passwd entry (common in containers) is checked like any other. Linux only.
 * Stateless; any thread.
 */
public final class OwnedPaths {
  private static final Path STATUS = Path.of("/proc/self/status");

  private OwnedPaths() {}

  /** This process's effective uid (the second field of {@code Uid:} in /proc/self/status). */
  public static int processUid() {
    try {
      for (String line : Files.readAllLines(STATUS)) {
        if (line.startsWith("Uid:")) {
          return Integer.parseInt(line.substring(4).trim().split("\\s+")[1]);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read this process's uid from " + STATUS, e);
    }
    throw new IllegalStateException(STATUS + " has no Uid: line");
  }

  /**
   * Refuses {@code path} unless this process's user owns it.
   *
   * @param subject what the message says belongs to another user, e.g. "Invalid socket path:
   *     /run/x.sock exists and"
   * @throws IllegalArgumentException "{subject} belongs to uid N, not to this process (uid M)"
   */
  public static void requireOwn(Path path, String subject, LinkOption... options)
      throws IOException {
    int owner = (Integer) Files.getAttribute(path, "unix:uid", options);
    int me = processUid();
    if (owner != me) {
      throw new IllegalArgumentException(
          subject + " belongs to uid " + owner + ", not to this process (uid " + me + ")");
    }
  }

  /**
   * Refuses anything but an existing directory that this process's user owns ({@code options}:
   * whether a link is followed).
   *
   * @param what the kind of path, for the message, e.g. "shared memory directory"
   * @throws IllegalArgumentException naming {@code dir} and what is wrong with it
   */
  public static void requireOwnDirectory(Path dir, String what, LinkOption... options) {
    try {
      if (!Files.readAttributes(dir, BasicFileAttributes.class, options).isDirectory()) {
        throw new IllegalArgumentException("Invalid " + what + ": " + dir + " (not a directory)");
      }
      requireOwn(dir, "Invalid " + what + ": " + dir, options);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "Invalid " + what + ": " + dir + " (not a directory: " + e + ")", e);
    }
  }
}
