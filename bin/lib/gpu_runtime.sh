# Sourced by bin/gpu-train-check and bin/gpu-scaling-check: Spindle's classpath on a GPU machine.
# gpu_runtime_classpath BUNDLE prints the classpath of the bundle's Spindle jars (loader-spark,
# loader-gpu, loader-bench) and its cut-down Spark runtime (bin/gpu-bundle: spindle/,
# runtime.tar.xz, unpacked once into /tmp/spindle-gpu-runtime) with the jars of its lib/ the
# runtime left out; without a bundle, bin/spindle's own build (Maven; its classpath holds
# loader-bench's jar). Needs bin/lib/build.sh sourced first.
gpu_runtime_classpath() {
  local bundle="$1" rt=/tmp/spindle-gpu-runtime libs
  if [ -f "$bundle/runtime.tar.xz" ]; then
    if [ ! -d "$rt/runtime" ]; then
      mkdir -p "$rt" && tar -C "$rt" -xJf "$bundle/runtime.tar.xz" || return 1
    fi
    # not lib/'s test-only jars, nor slf4j-simple (the runtime logs through Log4j, as bin/spindle)
    libs="$(ls "$bundle"/lib/*.jar | grep -v -E '/(scalatest|scalactic|slf4j-simple|scala-reflect-2\.13\.10)' | paste -sd:)"
    echo "$(ls "$bundle"/spindle/*.jar | paste -sd:):$rt/runtime:$libs"
  else
    spindle_build spindle >&2 || return 1
    spindle_classpath
  fi
}
