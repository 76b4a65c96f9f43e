#!/usr/bin/env bash
# Builds libspindlejpeg.so (spindle_jpeg.c, spindle_resample.c, spindle_seek.c + Debian's static
# libjpeg-turbo) into OUT/dev/spindle/spark/image/native/linux-ARCH/, where NativeJpeg loads it
# from the classpath.
# Called by Maven (loader-spark, process-classes) with OUT = target/classes. Without a C compiler,
# libjpeg-turbo's headers or its static library it says so once and exits 0: the build goes on
# and Spindle decodes with OpenCV (and resamples in Java). Rebuilds only when a source or this
# script is newer.
set -euo pipefail
out="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$(uname -m)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) echo "spindle: skipped the native JPEG decoder (no build for $(uname -m))"; exit 0 ;;
esac
lib="$out/dev/spindle/spark/image/native/linux-$arch/libspindlejpeg.so"
fresh=1
for f in "$here"/*.c "$here"/*.h "$here/build.sh"; do
  [[ -f "$lib" && "$lib" -nt "$f" ]] || fresh=0
done
if ((fresh)); then
  exit 0
fi
cc="${CC:-cc}"
multiarch="$("$cc" -print-multiarch 2>/dev/null || true)"
static=""
for d in ${multiarch:+/usr/lib/$multiarch} /usr/lib64 /usr/lib /usr/local/lib; do
  if [[ -f "$d/libjpeg.a" ]]; then static="$d/libjpeg.a"; break; fi
done
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
missing=()
command -v "$cc" >/dev/null 2>&1 || missing+=("a C compiler ($cc)")
[[ -f /usr/include/jpeglib.h || -f /usr/local/include/jpeglib.h ]] \
  || missing+=("libjpeg-turbo's headers (libjpeg62-turbo-dev)")
[[ -n "$static" ]] || missing+=("libjpeg-turbo's static library libjpeg.a (libjpeg62-turbo-dev)")
[[ -f "$java_home/include/jni.h" ]] || missing+=("jni.h (a JDK; JAVA_HOME=$java_home)")
if ((${#missing[@]})); then
  printf 'spindle: skipped the native JPEG decoder: no %s; Spindle decodes with OpenCV\n' \
    "$(IFS=,; echo "${missing[*]}" | sed 's/,/, no /g')"
  exit 0
fi
mkdir -p "$(dirname "$lib")"
tmp="$lib.tmp.$$"
flags=(-fPIC -fvisibility=hidden -Wall -Wextra -Werror -I"$java_home/include"
  -I"$java_home/include/linux")
# the resample at -O3: its plain loops are vectorised per target (AVX2, SSE4.1, baseline)
"$cc" -O2 "${flags[@]}" -c -o "$tmp.jpeg.o" "$here/spindle_jpeg.c"
"$cc" -O3 "${flags[@]}" -c -o "$tmp.resample.o" "$here/spindle_resample.c"
"$cc" -O2 "${flags[@]}" -c -o "$tmp.seek.o" "$here/spindle_seek.c"
# libjpeg-turbo linked in, its symbols hidden (OpenCV's own libjpeg lives in the same process)
"$cc" -shared -o "$tmp" "$tmp.jpeg.o" "$tmp.resample.o" "$tmp.seek.o" "$static" \
  -Wl,--exclude-libs,ALL -Wl,-Bsymbolic -Wl,-z,noexecstack -Wl,--no-undefined -lc
rm -f "$tmp.jpeg.o" "$tmp.resample.o" "$tmp.seek.o"
mv -f "$tmp" "$lib"
echo "spindle: built the native JPEG decoder and resample $lib"
