#!/usr/bin/env bash
# Builds the API reference with Doxygen (the CMake target `docs`: docs/Doxyfile.in, the headers' `//` comments
# read through scripts/doxygen-comments.py) into <build>/docs/html, then fails when Doxygen warned about anything,
# an undocumented public symbol included, printing how many warnings each file has.
#
# Usage: scripts/docs.sh [--top N]   (N files in the per-file count, default 20; 0: all of them)
# Environment: CERIUM_BUILD_DIR (default build), CERIUM_DOCS_INSTALL=0 (do not run setup-debian.sh --docs).
# The full list is <build>/docs/warnings.log, one `file:line: warning: text` a line.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

top=20
while (($#)); do
  case $1 in
    --top) top=$2; shift 2 ;;
    *) echo "usage: $0 [--top N]" >&2; exit 2 ;;
  esac
done

if [[ ${CERIUM_DOCS_INSTALL:-1} != 0 ]]; then
  "$repo_root/scripts/setup-debian.sh" --docs
fi
command -v doxygen >/dev/null || { echo "cerium: doxygen is missing (scripts/setup-debian.sh --docs)" >&2; exit 1; }

mkdir -p "$build_dir"
start=$SECONDS
configure_and_build --target docs
log=$build_dir/docs/warnings.log
[[ -f $build_dir/docs/Doxyfile ]] || { echo "cerium: CMake made no docs target (Doxygen or Python 3 not found)" >&2; exit 1; }
echo "cerium: API reference in $build_dir/docs/html/index.html ($((SECONDS - start)) s)"

count=$(grep -c 'warning:' "$log" 2>/dev/null || true)
if [[ ${count:-0} -eq 0 ]]; then
  echo "cerium: Doxygen reported no warnings"
  exit 0
fi
undocumented=$(grep -c 'is not documented' "$log" || true)
echo "cerium: Doxygen reported $count warnings ($undocumented undocumented symbols); full list: $log"
echo "warnings  file"
# the file each warning names (relative to the repository), or "(no file)"
awk -v root="$repo_root/" '/warning:/ {
    f = "(no file)"
    if (match($0, /^[^:]+:[0-9]+: warning:/)) { f = $0; sub(/:[0-9]+: warning:.*/, "", f) }
    if (index(f, root) == 1) f = substr(f, length(root) + 1)
    print f
  }' "$log" | sort | uniq -c | sort -rn | { if ((top > 0)); then head -n "$top"; else cat; fi; } |
  awk '{printf "%8d  %s\n", $1, $2}'
files=$(grep 'warning:' "$log" | cut -d: -f1 | sort -u | wc -l)
((top > 0 && files > top)) && echo "   ... $files files in all (--top 0 lists them)"
exit 1
