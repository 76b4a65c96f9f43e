package dev.spindle.spark.batch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.ExtensionTypeRegistry;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Arrow's canonical extension type {@code arrow.fixed_shape_tensor} for uint8 tensors: storage
 * {@code FixedSizeList<uint8>[prod(shape)]}, metadata {@code {"shape":[...],"dim_names":[...]}}
 * (row-major, so no permutation). Readers that know the type (pyarrow, arrow-js) see a tensor per
 * row; others see the plain fixed-size list. Immutable and thread-safe.
 */
public final class FixedShapeTensorType extends ArrowType.ExtensionType {
  public static final String NAME = "arrow.fixed_shape_tensor";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final int[] shape;
  private final java.util.List<String> dimNames;

  public FixedShapeTensorType(int[] shape, java.util.List<String> dimNames) {
    if (shape.length == 0 || Arrays.stream(shape).anyMatch(d -> d <= 0)) {
      throw new IllegalArgumentException("Invalid tensor shape: " + Arrays.toString(shape));
    }
    if (!dimNames.isEmpty() && dimNames.size() != shape.length) {
      throw new IllegalArgumentException(
          "dim_names " + dimNames + " do not match shape " + Arrays.toString(shape));
    }
    this.shape = shape.clone();
    this.dimNames = java.util.List.copyOf(dimNames);
  }

  /** Registers the type so that Arrow readers in this JVM decode it. Idempotent. */
  public static void register() {
    ExtensionTypeRegistry.register(new FixedShapeTensorType(new int[] {1}, java.util.List.of()));
  }

  public int[] shape() {
    return shape.clone();
  }

  public java.util.List<String> dimNames() {
    return dimNames;
  }

  /** Elements per tensor: the fixed-size list's length. */
  public int listSize() {
    return Arrays.stream(shape).reduce(1, Math::multiplyExact);
  }

  @Override
  public ArrowType storageType() {
    return new ArrowType.FixedSizeList(listSize());
  }

  @Override
  public String extensionName() {
    return NAME;
  }

  @Override
  public boolean extensionEquals(ExtensionType other) {
    return other instanceof FixedShapeTensorType t
        && Arrays.equals(shape, t.shape)
        && dimNames.equals(t.dimNames);
  }

  @Override
  public String serialize() {
    ObjectNode node = JSON.createObjectNode();
    ArrayNode dims = node.putArray("shape");
    Arrays.stream(shape).forEach(dims::add);
    if (!dimNames.isEmpty()) {
      ArrayNode names = node.putArray("dim_names");
      dimNames.forEach(names::add);
    }
    return node.toString();
  }

  @Override
  public ArrowType deserialize(ArrowType storageType, String serializedData) {
    try {
      JsonNode node = JSON.readTree(serializedData);
      JsonNode dims = node.get("shape");
      int[] parsed = new int[dims.size()];
      for (int i = 0; i < parsed.length; i++) {
        parsed[i] = dims.get(i).asInt();
      }
      java.util.List<String> names = new ArrayList<>();
      if (node.has("dim_names")) {
        node.get("dim_names").forEach(n -> names.add(n.asText()));
      }
      FixedShapeTensorType type = new FixedShapeTensorType(parsed, names);
      if (!type.storageType().equals(storageType)) {
        throw new IllegalArgumentException(
            "Storage " + storageType + " does not match shape " + Arrays.toString(parsed));
      }
      return type;
    } catch (Exception e) {
      throw new IllegalArgumentException(
          "Invalid " + NAME + " metadata '" + serializedData + "': " + e.getMessage(), e);
    }
  }

  @Override
  public FieldVector getNewVector(String name, FieldType fieldType, BufferAllocator allocator) {
    FieldType storage = new FieldType(fieldType.isNullable(), storageType(), null, null);
    return new FixedShapeTensorVector(
        name, allocator, new FixedSizeListVector(name, allocator, storage, null), this);
  }

  /** The field for this type with a uint8 element child named "item". */
  public Field field(String name) {
    Field item = new Field("item", FieldType.notNullable(new ArrowType.Int(8, false)), null);
    return new Field(name, FieldType.notNullable(this), java.util.List.of(item));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FixedShapeTensorType t && extensionEquals(t);
  }

  @Override
  public int hashCode() {
    return Objects.hash(NAME, Arrays.hashCode(shape), dimNames);
  }
}
