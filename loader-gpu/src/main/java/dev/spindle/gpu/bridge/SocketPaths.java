package dev.spindle.gpu.bridge;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Checks and prepares the bridge's socket path: a private directory (created 0700 when missing),
 * a socket file made 0600 after bind, and refusal of a path that exists and belongs to another
 * user, is not a socket, or is a live socket. A stale socket of ours (nobody listening) is
 * replaced. Stateless; any thread.
 */
final class SocketPaths {
  private SocketPaths() {}

  static Path prepare(Path socket) throws IOException {
    Path abs = socket.toAbsolutePath();
    Path dir = abs.getParent();
    String me = System.getProperty("user.name");
    if (!Files.exists(dir)) {
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(
          PosixFilePermissions.fromString("rwx------")));
    } else {
      String owner = Files.getOwner(dir).getName();
      if (!owner.equals(me)) {
        throw new IllegalArgumentException("Invalid socket path: " + abs + ": directory " + dir
            + " belongs to user " + owner + ", not " + me);
      }
    }
    if (Files.exists(abs, LinkOption.NOFOLLOW_LINKS)) {
      PosixFileAttributes a = Files.readAttributes(abs, PosixFileAttributes.class,
          LinkOption.NOFOLLOW_LINKS);
      if (!a.owner().getName().equals(me)) {
        throw new IllegalArgumentException("Invalid socket path: " + abs
            + " exists and belongs to user " + a.owner().getName() + ", not " + me);
      }
      if (!a.isOther()) {
        throw new IllegalArgumentException("Invalid socket path: " + abs
            + " exists and is not a socket");
      }
      if (isLive(abs)) {
        throw new IllegalArgumentException("Invalid socket path: " + abs
            + " is in use by another bridge");
      }
      Files.delete(abs);
    }
    return abs;
  }

  /** Where the bridge on {@code socket} keeps its run token: {@code <socket>.token}. */
  static Path tokenFile(Path socket) {
    return socket.resolveSibling(socket.getFileName() + ".token");
  }

  /**
   * Writes {@code token} to {@link #tokenFile} (0600, created afresh: a stale file of ours is
   * replaced, a link is never followed) for trainers started by hand.
   */
  static void writeToken(Path socket, RunToken token) throws IOException {
    Path file = tokenFile(socket);
    Files.deleteIfExists(file);
    Files.writeString(Files.createFile(file, PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rw-------"))), token.value() + "\n");
  }

  static void removeToken(Path socket) {
    try {
      Files.deleteIfExists(tokenFile(socket));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove token file " + tokenFile(socket), e);
    }
  }

  static void restrict(Path socket) throws IOException {
    Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
  }

  static void remove(Path socket) {
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove socket " + socket, e);
    }
  }

  private static boolean isLive(Path socket) {
    try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      c.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
