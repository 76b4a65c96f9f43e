package dev.spindle.gpu.device;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Turns the GPU addresses Spark assigns (what {@code TaskContext.resources().get("gpu")} or {@code
 * spark.executor.resource.gpu.*} discovery gives: physical indices as strings) into CUDA ordinals
 * this process can open. Pure functions; any thread.
 *
 * <p>When {@code CUDA_VISIBLE_DEVICES} restricts the process, CUDA renumbers the visible devices
 * from 0, so physical address {@code a} becomes its position in that list.
 */
public final class GpuAssignment {
  private GpuAssignment() {}

  /**
   * Ordinals for {@code addresses} in the order given, duplicates removed.
   *
   * @param addresses Spark's GPU addresses (non-negative integers as strings); empty means no GPU
   * @param cudaVisibleDevices the value of {@code CUDA_VISIBLE_DEVICES}, or null/blank if unset
   * @throws IllegalArgumentException naming an address that is not a non-negative integer, or one
   *     that {@code CUDA_VISIBLE_DEVICES} hides
   */
  public static List<Integer> ordinals(List<String> addresses, String cudaVisibleDevices) {
    List<String> visible =
        cudaVisibleDevices == null || cudaVisibleDevices.isBlank()
            ? null
            : Arrays.stream(cudaVisibleDevices.split(",")).map(String::trim).toList();
    List<Integer> out = new ArrayList<>();
    for (String address : addresses) {
      int physical = parse(address);
      int ordinal = visible == null ? physical : visible.indexOf(Integer.toString(physical));
      if (ordinal < 0) {
        throw new IllegalArgumentException(
            "Invalid GPU address: '"
                + address
                + "' (not in CUDA_VISIBLE_DEVICES="
                + cudaVisibleDevices
                + ")");
      }
      if (!out.contains(ordinal)) {
        out.add(ordinal);
      }
    }
    return List.copyOf(out);
  }

  /**
   * The one ordinal a task uses: with several addresses, partitions spread over them round-robin.
   * Returns -1 (the host device) when {@code addresses} is empty.
   */
  public static int ordinalForTask(
      List<String> addresses, String cudaVisibleDevices, int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException(
          "Invalid partition id: " + partitionId + " (must be >= 0)");
    }
    List<Integer> ordinals = ordinals(addresses, cudaVisibleDevices);
    return ordinals.isEmpty() ? -1 : ordinals.get(partitionId % ordinals.size());
  }

  private static int parse(String address) {
    String a = address == null ? "" : address.trim();
    try {
      int v = Integer.parseInt(a);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // fall through to the error naming the value
    }
    throw new IllegalArgumentException(
        "Invalid GPU address: '" + address + "' (must be a non-negative integer)");
  }
}
