package dev.spindle.gpu.device;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The file side of {@link SharedMemoryDevice}'s slabs: the private directory, the removal of slab
 * files of JVMs that are gone, and the {@code /proc/<pid>/fd/<n>} link through which trainers reach
 * an unlinked slab. Linux only (procfs). Stateless; any thread.
 */
final class SlabFiles {
  private SlabFiles() {}

  /**
   * {@code base/spindle-<user>}: created 0700 when missing; an existing one must be a directory
   * (not a link) of this user, and is made 0700.
   */
  static Path privateDirectory(Path base) {
    Path dir = base.resolve("spindle-" + System.getProperty("user.name"));
    try {
      if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
        try {
          Files.createDirectory(
              dir,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (java.nio.file.FileAlreadyExistsException e) {
          // another JVM of this user made it first: checked below like any existing one
        }
      }
      requireOwnDirectory(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot prepare the shared memory directory " + dir, e);
    }
  }

  /** Refuses anything but an existing directory (not a link) that belongs to this user. */
  static void requireOwnDirectory(Path dir) {
    OwnedPaths.requireOwnDirectory(dir, "shared memory directory", LinkOption.NOFOLLOW_LINKS);
  }

  /**
   * Deletes files in {@code dir} whose name matches {@code slabName} (group 1: the pid of the JVM
   * that made it) when that process no longer runs. Returns how many were deleted.
   */
  static int removeStale(Path dir, Pattern slabName) {
    int removed = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path f : files) {
        Matcher m = slabName.matcher(f.getFileName().toString());
        if (m.matches() && !alive(m.group(1)) && Files.deleteIfExists(f)) {
          removed++;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the shared memory directory " + dir, e);
    }
    return removed;
  }

  private static boolean alive(String pid) {
    try {
      return ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false);
    } catch (NumberFormatException e) {
      return true; // not a pid this code wrote: leave it
    }
  }

  /**
   * {@code /proc/<this pid>/fd/<n>}, where n is this JVM's descriptor open on {@code file} (Java
   * does not expose descriptor numbers): the entry of {@code /proc/self/fd} whose file has {@code
   * file}'s device and inode. Matched by identity, not by name: the kernel names the link by the
   * canonical path, which differs from {@code file} when it or a parent is a symbolic link. {@code
   * file} must still be linked.
   */
  static Path descriptorLink(Path file) throws IOException {
    Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path fd : fds) {
        if (key != null && key.equals(fileKey(fd))) {
          return Path.of(
              "/proc",
              Long.toString(ProcessHandle.current().pid()),
              "fd",
              fd.getFileName().toString());
        }
      }
    }
    throw new IOException(
        "No descriptor of this JVM is open on "
            + file
            + " (/proc/self/fd lists none with its device and inode "
            + key
            + ")");
  }

  /** The device and inode of the file {@code fd} is open on (the link followed); null if gone. */
  private static Object fileKey(Path fd) {
    try {
      return Files.readAttributes(fd, BasicFileAttributes.class).fileKey();
    } catch (IOException e) {
      return null; // closed while listing, e.g. the listing's own descriptor
    }
  }
}
