#!/usr/bin/env bash
# The machine code of chosen kernels (device tool, after scripts/gpu-check.sh has built build-gpu): cuobjdump's
# SASS of the GPU benchmark binary, an opcode histogram per kernel matching SASS_FILTER, and the full listing of
# those kernels, to $OUT/sass.txt. What the profiler calls "issue-bound" is read off these counts.
#
# Environment: OUT, CERIUM_BUILD_DIR (default build-gpu), SASS_FILTER (a Python regex over mangled kernel names,
# default the NTT tiles and the register conversion), SASS_LISTING (1: also the full listing).
set -uo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${CERIUM_BUILD_DIR:-$repo_root/build-gpu}
out=${OUT:-$build_dir/out}
mkdir -p "$out"
[[ -x /usr/local/cuda/bin/cuobjdump ]] && export PATH=/usr/local/cuda/bin:$PATH
binary=$build_dir/bench/cerium_bench_gpu
cuobjdump -sass "$binary" >"$out/sass_all.txt" 2>"$out/sass.err" || { echo "cuobjdump failed"; exit 1; }
python3 - "$out/sass_all.txt" "${SASS_FILTER:-ntt_tile_kernel.*Li16ELi11E|register_conversion_kernelILi16E|inner_product}" \
  "${SASS_LISTING:-1}" >"$out/sass.txt" <<'PY'
import collections, re, sys
text, pattern, listing = open(sys.argv[1]).read(), re.compile(sys.argv[2]), sys.argv[3] == "1"
functions = re.split(r"\n\s*Function : ", text)
for f in functions[1:]:
    name, body = f.split("\n", 1)
    if not pattern.search(name):
        continue
    ops = collections.Counter()
    lines = []
    for line in body.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m:
            ops[m.group(2)] += 1
            lines.append(line.strip())
    total = sum(ops.values())
    print(f"=== {name.strip()}  ({total} instructions)")
    base = collections.Counter()
    for op, c in ops.items():
        base[op.split(".")[0]] += c
    print("  " + ", ".join(f"{op} {c}" for op, c in base.most_common()))
    if listing:
        print("\n".join("    " + l for l in lines))
PY
rm -f "$out/sass_all.txt"
grep -E "^===" "$out/sass.txt" | head -60
