# Sourced by Spindle's launchers (bin/spindle, bin/notebooks): where the build outputs live, the
# JVM flags Spark needs, and a quiet "build if missing or stale" step. Not executable on its own.
# Defines: SPINDLE_ROOT, SPINDLE_JAR, SPINDLE_ALL_JAR, SPINDLE_CLASSPATH_FILE, SPINDLE_BENCH_JAR,
# SPINDLE_JAVA, SPARK_JVM_FLAGS, SPINDLE_GC_FLAGS, SPINDLE_JIT_FLAGS (arrays), spindle_build
# (builds when needed), spindle_classpath (prints it), spindle_drop_incubator_warning (a stderr
# filter).

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

# The collector and young generation of Spindle's JVM, unless SPINDLE_JAVA_OPTS chooses a
# collector or sizes the young generation itself. Embedded Spark's JVM holds little on its heap
# (decoded pixels live off it: in the feeder's ring, in Arrow buffers) but allocates fast (each
# sample's encoded bytes), and G1's defaults size the heap for throughput. The parallel collector
# with a fixed 128 MB young generation, whose survivor spaces (a fifth each) hold a read group's
# samples until they die, keeps it small: with this archive below, a `train` tree peaked at 740
# MB against 1,076-1,248 with G1 and none, at the same images/s (docs/benchmarks.md, "The
# launcher's defaults, on and off").
SPINDLE_GC_FLAGS=()
if [[ ! "${SPINDLE_JAVA_OPTS:-}" =~ (Use[A-Za-z0-9]*GC|-Xmn|NewSize|SurvivorRatio) ]]; then
  SPINDLE_GC_FLAGS=(-XX:+UseParallelGC -Xmn128m -XX:SurvivorRatio=3 -XX:-UseAdaptiveSizePolicy)
fi

# The JIT's thresholds, three times HotSpot's defaults (-XX:CompileThresholdScaling=3). A command's
# JVM runs a great deal of code only a few thousand times (Spark's start, its scheduler, Hadoop's
# configuration, the bridge's handshake) beside the little it runs millions of times (the decode,
# the resample, the tar and pipeline loops). With the default thresholds the compilers keep
# compiling the former well into the first epochs, on the cores the decode needs; with these the
# hot code still compiles within the first epoch and the rest mostly never does: a `train` of
# 2,000 images on 2 cores spent 0.09 ms a steady image compiling instead of 0.20 and its trainer
# saw 1.09x the images/s (median of 8 pairs), `bench images` no slower and the first batch as
# soon (docs/benchmarks.md, "The JIT's thresholds"). A -XX:CompileThresholdScaling in
# SPINDLE_JAVA_OPTS wins (it comes later on the command line).
SPINDLE_JIT_FLAGS=(-XX:CompileThresholdScaling=3)

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
  # Maven leaves a jar whose contents did not change as it was (a pom.xml edited without a code
  # change): mark the jars built now, or every later run would find them stale and build again
  touch "$SPINDLE_JAR"
  [[ ! -f "$SPINDLE_BENCH_JAR" ]] || touch "$SPINDLE_BENCH_JAR"
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
# loader-bench's jar where it was built (it adds `bench` to the command line), then
# SPINDLE_EXTRA_CLASSPATH.
spindle_classpath() {
  printf '%s:%s' "$SPINDLE_JAR" "$(cat "$SPINDLE_CLASSPATH_FILE")"
  if [[ -f "$SPINDLE_BENCH_JAR" ]]; then
    printf ':%s' "$SPINDLE_BENCH_JAR"
  fi
  # SPINDLE_EXTRA_CLASSPATH: jars a user adds, e.g. a file system connector (hadoop-aws and the AWS
  # SDK for s3a://: docs/guide/object-stores.md); local-cluster executors get the same classpath
  if [[ -n "${SPINDLE_EXTRA_CLASSPATH:-}" ]]; then
    printf ':%s' "$SPINDLE_EXTRA_CLASSPATH"
  fi
}

# Class data sharing (AppCDS). A command's start loads some 10,000 classes (Spark's, Hadoop's,
# Arrow's, Spindle's); from an archive of them the JVM maps them instead (with the collector
# above, a `train` reached its first batch 2.0 s sooner on 2 cores: docs/benchmarks.md). The archive is made from bin/lib/cds-classes.lst, once
# per build (its name holds a checksum of the java binary, the JVM flags and every classpath
# entry's size and time), in the background by the first run that finds it missing (about 15 s of
# CPU; that run goes without), or at once with SPINDLE_CDS=make (benchmarks). SPINDLE_CDS=0: none.
# An archive the JVM cannot use is ignored silently (-Xlog:cds*=off): the command runs as without.
SPINDLE_CDS_LIST="$SPINDLE_ROOT/bin/lib/cds-classes.lst"
SPINDLE_CDS_DIR="$SPINDLE_ROOT/loader-spark/target/cds"

# Prints the JVM flags that use the archive for classpath $1 when it exists; starts making it when
# it does not (and waits for it with SPINDLE_CDS=make). Prints nothing when SPINDLE_CDS=0.
spindle_cds_flags() {
  local cp="$1" mode="${SPINDLE_CDS:-1}" java key archive
  [[ "$mode" != 0 && -f "$SPINDLE_CDS_LIST" ]] || return 0
  java="$(readlink -f "$(command -v "$SPINDLE_JAVA")")"
  key="$({ printf '%s\n' "$java" "${SPARK_JVM_FLAGS[*]}" "${SPINDLE_GC_FLAGS[*]}" "${SPINDLE_JIT_FLAGS[*]}"
    # the JDK itself (an upgrade in place), the class list and every classpath entry
    tr ':' '\n' <<<"$cp" | xargs -d '\n' stat -c '%n %s %Y' "$SPINDLE_CDS_LIST" \
      "${java%/bin/java}/lib/modules" "${java%/bin/java}/lib/server/libjvm.so" 2>/dev/null || true
  } | cksum | cut -d' ' -f1)"
  archive="$SPINDLE_CDS_DIR/spindle-$key.jsa"
  # a JVM that could not make it (marked .failed) is not asked again for this build
  if [[ ! -f "$archive" && ! -f "$archive.failed" ]]; then
    if [[ "$mode" == make ]]; then
      spindle_cds_make "$cp" "$archive" wait
    else
      (spindle_cds_make "$cp" "$archive" </dev/null >/dev/null 2>&1 &)
    fi
  fi
  if [[ -f "$archive" ]]; then
    printf '%s\n' -Xshare:auto -Xlog:cds*=off "-XX:SharedArchiveFile=$archive"
  fi
}

# Makes the archive $2 for classpath $1 unless another run is making one (with $3 "wait": once
# that run is done, unless it made this one); removes older builds'.
spindle_cds_make() {
  local cp="$1" archive="$2" tmp lock nowait=(-n)
  [[ "${3:-}" != wait ]] || nowait=()
  mkdir -p "$SPINDLE_CDS_DIR" || return 0
  exec {lock}>"$SPINDLE_CDS_DIR/.lock"
  if flock "${nowait[@]}" "$lock" && [[ ! -f "$archive" ]]; then
    find "$SPINDLE_CDS_DIR" -maxdepth 1 -name '.making-*.jsa' -delete # a killed maker's
    tmp="$SPINDLE_CDS_DIR/.making-$BASHPID.jsa"
    if nice "$SPINDLE_JAVA" "${SPARK_JVM_FLAGS[@]}" "${SPINDLE_GC_FLAGS[@]}" "${SPINDLE_JIT_FLAGS[@]}" -Xshare:dump -Xlog:cds*=off -Xlog:gc*=off \
      -XX:SharedClassListFile="$SPINDLE_CDS_LIST" -XX:SharedArchiveFile="$tmp" -cp "$cp" \
      >/dev/null 2>&1; then
      find "$SPINDLE_CDS_DIR" -maxdepth 1 -name 'spindle-*.jsa*' -delete
      mv -f "$tmp" "$archive"
    else
      rm -f "$tmp"
      touch "$archive.failed"
    fi
  fi
  exec {lock}>&-
}
