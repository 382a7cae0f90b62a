#!/usr/bin/env bash
# Fails when a header or source includes a layer above its own.
#
# Usage: scripts/check-layers.sh [repo_root]   (default: the repo holding this script)
#
# Layers are the folders include/cerium/<layer>/ and src/<layer>/; kernels/ is backend. A layer may include
# itself and any layer of strictly lower rank; equal rank but different layer (io vs circuits) is a violation.
# Known exceptions live in scripts/layers.allow; an entry that matches nothing fails, so the list only shrinks.
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
allow_file=scripts/layers.allow

# Bottom to top. Adding a layer means adding it here.
layer_order="core:0 math:1 ring:2 rlwe:3 backend:4 dist:5 ckks:6 io:7 circuits:7 boot:8 expr:9 plan:10 graph:11 nn:12"

dirs=()
for d in include/cerium src kernels; do
  if [[ -d $d ]]; then dirs+=("$d"); fi
done
[[ ${#dirs[@]} -gt 0 ]] || { echo "check-layers: no include/cerium, src or kernels under $root" >&2; exit 2; }

mapfile -t files < <(find -H "${dirs[@]}" -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.cu' \
  -o -name '*.cuh' \) | LC_ALL=C sort)

# One grep over every file; exit status 1 only means "no include lines", which is fine.
includes=""
if [[ ${#files[@]} -gt 0 ]]; then
  includes=$(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' -- "${files[@]}" || [[ $? -eq 1 ]])
fi

awk -v layer_order="$layer_order" -v allow_file="$allow_file" '
function layer_of(path,   p) {
  if (path ~ /^kernels\//) return "backend"
  if (path ~ /^include\/cerium\/[^\/]+\//) { p = substr(path, 16); return substr(p, 1, index(p, "/") - 1) }
  if (path ~ /^src\/[^\/]+\//) { p = substr(path, 5); return substr(p, 1, index(p, "/") - 1) }
  return ""  # top-level include/cerium/*.hpp or src/*: no layer, not checked
}
function dirname(path) { sub(/\/[^\/]*$/, "", path); return path }
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
function unknown(where, name) {
  printf "%s: layer %s is not in the layer order; add it to scripts/check-layers.sh\n", where, name
  errors++
}
function may_include(a,   i, out) {
  out = ""
  for (i = 1; i <= n_layers; i++)
    if (order[i] == a || rank[order[i]] < rank[a]) out = out (out == "" ? "" : ", ") order[i]
  return out
}
BEGIN {
  n_layers = split(layer_order, pairs, " ")
  for (i = 1; i <= n_layers; i++) {
    split(pairs[i], kv, ":"); order[i] = kv[1]; rank[kv[1]] = kv[2] + 0
  }
  n_allow = 0
  while ((getline line < allow_file) > 0) {
    allow_lineno++
    sub(/#.*/, "", line); line = trim(line)
    if (line == "") continue
    split_at = index(line, " -> ")
    if (split_at == 0) {
      printf "%s:%d: malformed entry (want \"<file> -> <included path>  # reason\"): %s\n", allow_file, allow_lineno, line
      errors++; continue
    }
    key = trim(substr(line, 1, split_at - 1)) SUBSEP trim(substr(line, split_at + 4))
    allow_line[key] = allow_lineno; allow_keys[++n_allow] = key
  }
}
# First input: the file list. Record it (for relative-include lookups) and vet each file own layer.
FILENAME == ARGV[1] {
  if ($0 == "") next
  exists[$0] = 1; n_files++
  l = layer_of($0)
  if (l != "" && !(l in rank) && !(l in seen_unknown)) { seen_unknown[l] = 1; unknown($0, l) }
  next
}
# Second input: path:line:#include ...
{
  c1 = index($0, ":"); path = substr($0, 1, c1 - 1); rest = substr($0, c1 + 1)
  c2 = index(rest, ":"); lineno = substr(rest, 1, c2 - 1); text = substr(rest, c2 + 1)
  if (!match(text, /[<"][^>"]*[>"]/)) next
  inc = substr(text, RSTART + 1, RLENGTH - 2)
  quoted = substr(text, RSTART, 1) == "\""
  own = layer_of(path)
  if (own == "" || !(own in rank)) next

  target = ""
  if (inc ~ /^cerium\/[^\/]+\//) {
    target = substr(inc, 8); target = substr(target, 1, index(target, "/") - 1)
    if (!(target in rank)) { unknown(path ":" lineno, target " (" inc ")"); next }
  } else if (quoted && inc ~ /^[^\/]+\//) {
    # "ckks/..." reaches into src/ckks/ -- unless it is a private header beside the includer.
    target = substr(inc, 1, index(inc, "/") - 1)
    if (!(target in rank) || ((dirname(path) "/" inc) in exists)) next
  } else next  # system header, top-level cerium/<file>.hpp, or private relative header

  if (target == own || rank[target] < rank[own]) next
  msg = sprintf("%s:%s: layer %s includes layer %s (%s): %s may include only %s", path, lineno, own, target, inc,
                own, may_include(own))
  key = path SUBSEP inc
  if (key in allow_line) { print "allowed (known, being removed): " msg; used[key] = 1; allowed++ }
  else { print msg; violations++ }
}
END {
  for (i = 1; i <= n_allow; i++) {
    key = allow_keys[i]
    if (key in used) continue
    split(key, parts, SUBSEP)
    printf "stale entry in %s:%d: %s -> %s matches no violation, remove it\n", allow_file, allow_line[key],
           parts[1], parts[2]
    stale++
  }
  printf "check-layers: %d files, %d violations, %d allowed, %d stale allow entries, %d other errors\n", n_files,
         violations, allowed, stale, errors
  exit (violations + stale + errors > 0) ? 1 : 0
}
' <(printf '%s\n' "${files[@]}") <(printf '%s\n' "$includes")
