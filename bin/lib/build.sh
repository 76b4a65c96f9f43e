# Sourced by Spindle's launchers (bin/spindle, bin/notebooks): where the build outputs live, the
# JVM flags Spark needs, and a quiet "build if missing or stale" step. Not executable on its own.
# Defines: SPINDLE_ROOT, SPINDLE_JAR, SPINDLE_ALL_JAR, SPINDLE_CLASSPATH_FILE, SPINDLE_BENCH_JAR,
# SPINDLE_JAVA, SPARK_JVM_FLAGS (array), spindle_build (builds when needed), spindle_classpath
# (prints it), spindle_drop_incubator_warning (a stderr filter).

SPINDLE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SPINDLE_VERSION="0.1.0-SNAPSHOT"
SPINDLE_JAR="$SPINDLE_ROOT/loader-spark/target/loader-spark-$SPINDLE_VERSION.jar"
SPINDLE_ALL_JAR="$SPINDLE_ROOT/loader-spark/target/loader-spark-$SPINDLE_VERSION-all.jar"
SPINDLE_CLASSPATH_FILE="$SPINDLE_ROOT/loader-spark/target/runtime-classpath.txt"
# The benchmarks (`spindle bench`): loader-bench needs nothing beyond loader-spark's classpath.
SPINDLE_BENCH_JAR="$SPINDLE_ROOT/loader-bench/target/loader-bench-$SPINDLE_VERSION.jar"
SPINDLE_JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

SPARK_JVM_FLAGS=(
  -XX:+IgnoreUnrecognizedVMOptions --add-modules=jdk.incubator.vector
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED
  --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED
  --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true
)

# Whether any of the files or folders after $1 holds something newer than the jar $1.
spindle_newer_than() {
  local jar="$1"; shift
  [[ -n "$(find "$@" -newer "$jar" -print -quit)" ]]
}

# $1 "bench": loader-bench's jar must be there and current too. Other commands do without it (it
# is on the classpath when built), so that a launcher run while Maven builds loader-spark (the
# *IT suites) does not start a second build for the module built after it.
spindle_needs_build() {
  [[ -f "$SPINDLE_JAR" && -f "$SPINDLE_ALL_JAR" && -f "$SPINDLE_CLASSPATH_FILE" \
    && -f "$SPINDLE_ROOT/loader-spark/target/spark-classpath.txt" ]] || return 0
  spindle_newer_than "$SPINDLE_JAR" "$SPINDLE_ROOT/pom.xml" "$SPINDLE_ROOT"/loader-{gpu,spark}/pom.xml \
    "$SPINDLE_ROOT"/loader-{gpu,spark}/src/main && return 0
  [[ "${1:-}" == bench ]] || return 1
  [[ -f "$SPINDLE_BENCH_JAR" ]] || return 0
  spindle_newer_than "$SPINDLE_BENCH_JAR" "$SPINDLE_ROOT/pom.xml" "$SPINDLE_ROOT/loader-bench/pom.xml" \
    "$SPINDLE_ROOT/loader-bench/src/main"
}

# Builds the jars (loader-bench's too) and the runtime classpath file when missing or older than
# the sources; quiet unless the build fails. Tests are neither run nor compiled
# (-Dmaven.test.skip): a first run needs only the main code. $1 names the caller in messages; $2
# "bench" checks loader-bench as well (spindle_needs_build).
spindle_build() {
  local who="${1:-spindle}" log
  spindle_needs_build "${2:-}" || return 0
  echo "$who: building (first run or sources changed)..." >&2
  log="$(mktemp)"
  if ! (cd "$SPINDLE_ROOT" && mvn -B -q -Dmaven.test.skip=true package >"$log" 2>&1); then
    cat "$log" >&2
    echo "$who: build failed (log above)" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# Copies stdin to stderr without the line the JVM prints for `--add-modules jdk.incubator.vector`
# ("WARNING: Using incubator modules: jdk.incubator.vector"): it is not about the user's command.
# The JVM prints it first; after it, everything passes at once, unbuffered, so a progress line
# redrawn with carriage returns (no newline) shows as it is drawn.
# Ignores SIGINT and SIGTERM, so the JVM's last words on Ctrl-C still get through.
spindle_drop_incubator_warning() {
  trap '' INT TERM
  local line
  if IFS= read -r line; then
    [[ "$line" == 'WARNING: Using incubator modules: jdk.incubator.vector' ]] \
      || printf '%s\n' "$line" >&2
  elif [[ -n "$line" ]]; then
    printf '%s' "$line" >&2
  fi
  cat >&2 || true
}

# Spindle's jar followed by its runtime dependencies (Spark, Arrow, Hadoop, OpenCV, ...), then
# loader-bench's jar where it was built (it adds `bench` to the command line).
spindle_classpath() {
  printf '%s:%s' "$SPINDLE_JAR" "$(cat "$SPINDLE_CLASSPATH_FILE")"
  if [[ -f "$SPINDLE_BENCH_JAR" ]]; then
    printf ':%s' "$SPINDLE_BENCH_JAR"
  fi
}
