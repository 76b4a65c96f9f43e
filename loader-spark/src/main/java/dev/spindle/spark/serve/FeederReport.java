package dev.spindle.spark.serve;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The feeders of a served run for the job report, one entry per executor and device: the ranks it
 * served and its latest statistics (slot occupancy over time, H2D bytes and GB/s, copy time,
 * trainer wait, producer blocked; cumulative since the feeder was created, so a later epoch's
 * snapshot supersedes an earlier one's). Driver thread.
 */
public final class FeederReport {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Map<String, Entry> byFeeder = new LinkedHashMap<>();

  private static final class Entry {
    final TreeSet<Integer> ranks = new TreeSet<>();
    ServedRank last;
  }

  public void add(ServedRank s) {
    Entry e =
        byFeeder.computeIfAbsent(
            s.executor()
                + "|"
                + s.device()
                + (s.device().startsWith("host") ? "|rank" + s.rank() : ""),
            k -> new Entry());
    e.ranks.add(s.rank());
    e.last = s;
  }

  public List<Map<String, Object>> entries() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Entry e : byFeeder.values()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("executor", e.last.executor());
      m.put("host", e.last.host());
      m.put("device", e.last.device());
      m.put("ranks", List.copyOf(e.ranks));
      m.put("socket", e.last.socket());
      m.put("stats", parse(e.last.feederStatsJson()));
      out.add(m);
    }
    return out;
  }

  private static Object parse(String json) {
    try {
      return JSON.readValue(json, Map.class);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Feeder statistics are not JSON: " + json, e);
    }
  }
}
