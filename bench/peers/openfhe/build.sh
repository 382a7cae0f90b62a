#!/usr/bin/env bash
# Builds openfhe_cpu (OpenFHE 1.5.1 CKKS CPU timings) against the OpenFHE PyPI wheel's prebuilt shared libraries.
# Nothing of OpenFHE is kept in this repository; get the two inputs once, outside it:
#   wheel (libraries):  pip download openfhe==1.5.1.0.22.4 --no-deps -d /tmp/ofhe && \
#                       unzip -q /tmp/ofhe/openfhe-1.5.1.0.22.4-py3-none-any.whl -d /tmp/ofhe/wheel
#                       -> /tmp/ofhe/wheel/openfhe/lib/libOPENFHE{core,pke,binfhe}.so.1
#   source (headers):   git clone --branch v1.5.1 --recurse-submodules https://github.com/openfheorg/openfhe-development /tmp/ofhe/src
#                       (only the cereal submodule, third-party/cereal at 984e3f1, is needed)
# The wheel was built from tag v1.5.1 with OpenFHE's default CMake options (NATIVE_SIZE 64, MATHBACKEND 4,
# WITH_OPENMP ON, WITH_NATIVEOPT OFF, CKKS_M_FACTOR 1, GCC on Ubuntu 22.04). The only CMake-generated header
# the public headers need is config_core.h; this script writes it into $OPENFHE_GEN from a here-doc, with what
# configure/config_core.in gives for those options, and passes the compile definitions OpenFHE's CMakeLists.txt
# adds for GCC (-DMATHBACKEND=4 -DPARALLEL -DBUILTIN_INFO_AVAILABLE -DOPENFHE_VERSION=1.5.1).
# (src/core/include/version.h is a plain file in v1.5.1, not generated.)
#
# Usage: [OPENFHE_WHEEL_LIB=...] [OPENFHE_SRC=...] [OPENFHE_GEN=...] [CXX=g++] ./build.sh   -> ./openfhe_cpu
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OPENFHE_WHEEL_LIB="${OPENFHE_WHEEL_LIB:-/tmp/ofhe/wheel/openfhe/lib}"
OPENFHE_SRC="${OPENFHE_SRC:-/tmp/ofhe/src}"
OPENFHE_GEN="${OPENFHE_GEN:-/tmp/ofhe/generated}"
CXX="${CXX:-g++}"
OUT="${OUT:-$here/openfhe_cpu}"

for f in "$OPENFHE_WHEEL_LIB/libOPENFHEpke.so.1" "$OPENFHE_WHEEL_LIB/libOPENFHEcore.so.1" \
         "$OPENFHE_SRC/src/pke/include/openfhe.h" "$OPENFHE_SRC/third-party/cereal/include/cereal/cereal.hpp"; do
  [[ -e "$f" ]] || { echo "build.sh: missing $f (see the comments at the top of this script)" >&2; exit 1; }
done
grep -q 'set(OPENFHE_VERSION_PATCH 1)' "$OPENFHE_SRC/CMakeLists.txt" && grep -q 'set(OPENFHE_VERSION_MINOR 5)' \
  "$OPENFHE_SRC/CMakeLists.txt" || { echo "build.sh: $OPENFHE_SRC is not OpenFHE 1.5.1" >&2; exit 1; }

mkdir -p "$OPENFHE_GEN"
# configure/config_core.in with NATIVE_SIZE=64 (NATIVEINT 64), MATHBACKEND=4 (so WITH_BE4 ON), WITH_OPENMP=ON,
# CKKS_M_FACTOR=1, check_type_size finding __int128 and uint64_t (HAVE_INT128, HAVE_INT64); everything else OFF.
cat > "$OPENFHE_GEN/config_core.h" <<'EOF'
//==================================================
// Written by bench/peers/openfhe/build.sh to match the OpenFHE 1.5.1 wheel's default CMake configuration.
//==================================================
#ifndef __CMAKE_GENERATED_CONFIG_CORE_H__
#define __CMAKE_GENERATED_CONFIG_CORE_H__

/* #undef WITH_BE2 */
#define WITH_BE4
/* #undef WITH_NOISE_DEBUG */
/* #undef WITH_REDUCED_NOISE */
/* #undef WITH_NTL */
/* #undef WITH_TCM */
#define WITH_OPENMP
/* #undef WITH_NATIVEOPT */

#define CKKS_M_FACTOR 1
#define HAVE_INT128 1
#define HAVE_INT64 1
#define MATHBACKEND 4
#define NATIVEINT 64

#endif  // __CMAKE_GENERATED_CONFIG_CORE_H__
EOF

# The wheel's libraries carry no RUNPATH, so libOPENFHEpke.so.1 finds libOPENFHEcore/binfhe.so.1 only through
# the executable's DT_RPATH (--disable-new-dtags; a DT_RUNPATH would not apply to those indirect dependencies).
# No -march=native: the libraries were built without WITH_NATIVEOPT, and inline OpenFHE code instantiated here
# must match theirs. -Wno-* silence warnings from OpenFHE's headers only.
set -x
"$CXX" -std=c++17 -O3 -fopenmp -DNDEBUG \
  -DMATHBACKEND=4 -DPARALLEL -DBUILTIN_INFO_AVAILABLE -DOPENFHE_VERSION=1.5.1 \
  -I"$OPENFHE_GEN" \
  -I"$OPENFHE_SRC/src/core/include" -I"$OPENFHE_SRC/src/pke/include" -I"$OPENFHE_SRC/src/binfhe/include" \
  -I"$OPENFHE_SRC/third-party/cereal/include" \
  -Wall -Wno-parentheses -Wno-unused-parameter \
  "$here/openfhe_cpu.cpp" -o "$OUT" \
  -L"$OPENFHE_WHEEL_LIB" -Wl,--no-as-needed -l:libOPENFHEpke.so.1 -l:libOPENFHEcore.so.1 -l:libOPENFHEbinfhe.so.1 \
  -Wl,--as-needed -Wl,--disable-new-dtags -Wl,-rpath,"$OPENFHE_WHEEL_LIB"
