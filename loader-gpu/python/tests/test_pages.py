"""spindle_bridge.pages: a released batch's pages are dropped only where the trainer wrote (its
own copies), so a slot that was only read stays mapped and is not faulted in again."""
import ctypes
import mmap
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spindle_bridge.pages import PrivatePages  # noqa: E402

PAGE = mmap.PAGESIZE
PAGES = 8


def mapped(mm, page):
    """Whether ``page`` of ``mm`` is in this process's page table now (pagemap bit 63)."""
    c = ctypes.c_char.from_buffer(mm)
    address = ctypes.addressof(c)
    del c
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(8 * (address // PAGE + page))
        return bool(struct.unpack("<Q", f.read(8))[0] >> 63 & 1)


@unittest.skipUnless(os.path.exists("/proc/self/pagemap"), "needs Linux's /proc/self/pagemap")
class PrivatePagesTest(unittest.TestCase):
    def setUp(self):
        # shared memory, as the feeder's slab, where there is some
        d = tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "slab")
        self.content = bytes(i % 251 for i in range(PAGES * PAGE))
        with open(path, "wb") as f:
            f.write(self.content)
        fd = os.open(path, os.O_RDONLY)
        self.mm = mmap.mmap(fd, PAGES * PAGE, access=mmap.ACCESS_COPY)  # as the client maps
        os.close(fd)
        self.pages = PrivatePages(self.mm)
        self.addCleanup(self.mm.close)
        self.addCleanup(self.pages.close)

    def read_all(self):
        return bytes(self.mm[:])

    def test_pages_only_read_stay_mapped(self):
        self.assertEqual(self.read_all(), self.content)
        self.assertTrue(all(mapped(self.mm, p) for p in range(PAGES)))
        self.assertFalse(self.pages.has_private(0, PAGES * PAGE))
        self.pages.discard([(100, 3 * PAGE)])
        self.assertTrue(all(mapped(self.mm, p) for p in range(PAGES)), "no page was dropped")

    def test_written_pages_show_the_files_bytes_again_after_discard(self):
        self.read_all()
        self.mm[PAGE + 5] = 7  # an in-place write copies page 1 into this process
        self.mm[3 * PAGE] = 9
        self.assertTrue(self.pages.has_private(PAGE, PAGE))
        self.assertTrue(self.pages.has_private(0, PAGES * PAGE))
        self.assertFalse(self.pages.has_private(4 * PAGE, 4 * PAGE))
        self.pages.discard([(PAGE + 1, 2 * PAGE), (3 * PAGE, 10)])
        self.assertEqual(self.read_all(), self.content)
        self.assertFalse(self.pages.has_private(0, PAGES * PAGE))

    def test_without_the_page_map_every_release_drops_its_pages(self):
        self.read_all()
        self.pages.close()  # as where /proc/self/pagemap cannot be read
        self.assertTrue(self.pages.has_private(0, PAGE))
        self.pages.discard([(0, 2 * PAGE)])
        self.assertEqual([mapped(self.mm, p) for p in range(3)], [False, False, True])
        self.assertEqual(self.read_all(), self.content)


if __name__ == "__main__":
    unittest.main()
