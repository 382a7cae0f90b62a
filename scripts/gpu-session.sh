#!/usr/bin/env bash
# One device-tool call: scripts/gpu-check.sh, then scripts/gpu-profile.sh (per-kernel times of the key-switching
# operations), with every log packed into $OUT/results.tgz: the device tool brings back at most 8 files. The
# summary and the benchmark JSON also come back on their own. Environment: as the two scripts take, plus
# GPU_PROFILE=0 to skip the profile, GPU_PROFILE_LIMIT_S (default 100) to bound it, GPU_SASS=1 for
# scripts/gpu-sass.sh's machine-code counts, AB_DIR for scripts/gpu-ab.sh's comparison of kernel variants, GPU_PEERS=1
# for scripts/gpu-peers.sh (the GPU peer beside Cerium, same run).
set -uo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
final=${OUT:-$repo_root/build-gpu/out}
work=$(mktemp -d /tmp/cerium-gpu-session.XXXXXX)
export OUT=$work
"$repo_root/scripts/gpu-check.sh"
rc=$?
if [[ ${GPU_PROFILE:-1} == 1 ]]; then
  timeout -k 5 "${GPU_PROFILE_LIMIT_S:-100}" "$repo_root/scripts/gpu-profile.sh" 2>&1 | tee "$work/profile_table.txt" |
    tail -80
fi
[[ ${GPU_SASS:-0} == 1 ]] && "$repo_root/scripts/gpu-sass.sh" 2>&1 | tail -40
[[ -n ${AB_DIR:-} ]] && "$repo_root/scripts/gpu-ab.sh" 2>&1 | tee "$work/ab_summary.txt"
# GPU_PEERS=1: the GPU peer beside Cerium's operations in the same run (scripts/gpu-peers.sh; carry .whl).
[[ ${GPU_PEERS:-0} == 1 ]] && "$repo_root/scripts/gpu-peers.sh" 2>&1 | tail -40
mkdir -p "$final"
tar czf "$final/results.tgz" -C "$work" .
for f in summary.txt ab_summary.txt profile_table.txt bench_gpu.json bench_bootstrap.json bench_resnet20.json \
         bench_peers.json examples.log; do
  [[ -f $work/$f ]] && cp "$work/$f" "$final/"
done
exit $rc
