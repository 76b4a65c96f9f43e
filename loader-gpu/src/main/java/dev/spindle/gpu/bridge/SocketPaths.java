package dev.spindle.gpu.bridge;

import dev.spindle.gpu.device.OwnedPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Checks and prepares the bridge's socket path: a private directory (created 0700 when missing), a
 * socket file made 0600 after bind, and refusal of a path that exists and belongs to another user,
 * is not a socket, or is a live socket. A stale socket of ours (nobody listening) is replaced.
 * Stateless; any thread.
 */
final class SocketPaths {
  private SocketPaths() {}

  static Path prepare(Path socket) throws IOException {
    Path abs = socket.toAbsolutePath();
    Path dir = abs.getParent();
    if (!Files.exists(dir)) {
      Files.createDirectories(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } else {
      OwnedPaths.requireOwnDirectory(dir, "socket directory");
    }
    if (Files.exists(abs, LinkOption.NOFOLLOW_LINKS)) {
      OwnedPaths.requireOwn(
          abs, "Invalid socket path: " + abs + " exists and", LinkOption.NOFOLLOW_LINKS);
      if (!Files.readAttributes(abs, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
          .isOther()) {
        throw new IllegalArgumentException(
            "Invalid socket path: " + abs + " exists and is not a socket");
      }
      if (isLive(abs)) {
        throw new IllegalArgumentException(
            "Invalid socket path: " + abs + " is in use by another bridge");
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
   * Writes {@code token} to {@link #tokenFile} (0600, a link is never followed) for trainers
   * started by hand. The token is written to a private temporary file beside it and renamed into
   * place, so a reader that polls for the file sees it whole or not at all: created empty and then
   * filled, a trainer that read it in between presented an empty token and was refused.
   */
  static void writeToken(Path socket, RunToken token) throws IOException {
    Path file = tokenFile(socket);
    Path part =
        Files.createTempFile(
            file.getParent(),
            "." + file.getFileName() + ".",
            ".part",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try {
      Files.writeString(part, token.value() + "\n");
      Files.move(part, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(part);
    }
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
