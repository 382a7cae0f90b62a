#!/usr/bin/env bash
# A GPU peer measured beside Cerium in one device run (figures against a peer count only from the same run on the
# same card): DESILO FHE's own driver, then Cerium's benchmarks of the operations it times (multiply + relinearize
# + rescale, rotate, bootstrap at N = 2^16). Run on the GPU machine after scripts/gpu-check.sh (its programs in
# build-gpu). Writes $OUT/peer_desilo.log and $OUT/bench_peers.json; then, on any machine:
#   scripts/plot-bench.py bench_peers.json --peer DESILO=peer_desilo.log --prefix gpu_h200 --out-dir docs/figures
#
# The peer is a pip wheel fetched on the development machine (nothing is downloaded here), in .whl/ beside its
# driver (see the peers' README): carry .whl with the device tool.
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_34_x86_64 -d .whl desilofhe-cu130==1.17.0
#
# Environment: OUT, CERIUM_BUILD_DIR (default build-gpu), PEER_WHEEL_DIR (default .whl), PEER_LIMIT_S (default
# 240: each side's time limit), DESILO_MODE (default "async gpu": its "gpu" mode synchronizes every call, about
# three times slower on an H100, and is not the figure to compare).
set -uo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${CERIUM_BUILD_DIR:-$repo_root/build-gpu}
out=${OUT:-$build_dir/out}
wheels=${PEER_WHEEL_DIR:-$repo_root/.whl}
limit=${PEER_LIMIT_S:-240}
mkdir -p "$out"
rc=0

site=$(mktemp -d /tmp/cerium-peer.XXXXXX)
if compgen -G "$wheels/*.whl" >/dev/null && [[ -f $wheels/desilo_bench.py ]]; then
  python3 -m pip install -q --no-index --no-deps --target "$site" "$wheels"/*.whl >"$out/peer_desilo.log" 2>&1 &&
    PYTHONPATH=$site PYTHONUNBUFFERED=1 DESILO_MODE=${DESILO_MODE:-async gpu} timeout -k 5 "$limit" python3 "$wheels/desilo_bench.py" \
      >>"$out/peer_desilo.log" 2>&1 || rc=1
  grep -E "^(RESULT|PARAM)" "$out/peer_desilo.log"
else
  echo "gpu-peers: no wheel and driver in $wheels (see this script's header)" | tee "$out/peer_desilo.log"
  rc=1
fi

export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$build_dir/lib
timeout -k 5 "$limit" "$build_dir/bench/cerium_bench_gpu" \
  --benchmark_filter='^BM_(multiply_relinearize_rescale|rotate)_gpu/|^BM_bootstrap_n16_gpu' \
  --benchmark_out="$out/bench_peers.json" --benchmark_out_format=json >"$out/bench_peers.log" 2>&1 || rc=1
grep -E "^BM_" "$out/bench_peers.log" | cut -c1-160
exit $rc
