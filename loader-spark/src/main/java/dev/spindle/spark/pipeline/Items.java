package dev.spindle.spark.pipeline;

import java.nio.ByteBuffer;
import java.util.Collection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Default byte sizes and release of items the pipeline still owns when it drops them. */
final class Items {
  private static final Logger LOG = LoggerFactory.getLogger(Items.class);

  private Items() {}

  /** Bytes of the common payload types; 0 when unknown (only the item bound applies then). */
  static long defaultSize(Object item) {
    if (item instanceof byte[] b) {
      return b.length;
    }
    if (item instanceof ByteBuffer b) {
      return b.capacity();
    }
    if (item instanceof Collection<?> c) {
      long sum = 0;
      for (Object o : c) {
        sum += defaultSize(o);
      }
      return sum;
    }
    return 0;
  }

  /** Closes an {@link AutoCloseable} item (or the elements of a collection), logging failures. */
  static void release(Object item) {
    if (item instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("Closing a dropped item of type {} failed", item.getClass().getName(), e);
      }
    } else if (item instanceof Collection<?> c) {
      for (Object o : c) {
        release(o);
      }
    }
  }
}
