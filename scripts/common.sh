# Shared by the project scripts: where the build lives and how it is configured.
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${CERIUM_BUILD_DIR:-$repo_root/build}
jobs=$(nproc 2>/dev/null || echo 2)

# Put the CUDA Toolkit on PATH when it is installed in its usual place, so CMake finds nvcc.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }

configure_and_build() {
  cmake -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE="${CERIUM_BUILD_TYPE:-RelWithDebInfo}" \
    -DCERIUM_CUDA="${CERIUM_CUDA:-AUTO}" ${CERIUM_CMAKE_ARGS:-} >"$build_dir.configure.log" 2>&1 ||
    { cat "$build_dir.configure.log"; return 1; }
  cmake --build "$build_dir" -j "$jobs" "$@"
}
