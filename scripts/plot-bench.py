#!/usr/bin/env python3
"""Plots Cerium's Google Benchmark JSON (`--benchmark_out=FILE --benchmark_out_format=json`) as PNG figures.

Usage:
  scripts/plot-bench.py [options] FILE.json [FILE.json ...]

Figures (each skipped, with the reason printed, when the data for it is missing):
  PREFIX_scaling.png     time against limbs (or N) for each operation swept over them, one panel an operation;
                         where the benchmark reports floor_ratio (time over the time to move its bytes once at
                         the measured copy bandwidth), the memory floor time / floor_ratio as a dashed line
  PREFIX_floor.png       operations measured at one size: time beside the memory floor, with the ratio
  PREFIX_bootstrap.png   a bootstrap's per-stage breakdown (the ms_<stage> counters of BM_bootstrap_*), one bar
                         per configuration, with the whole bootstrap's time beside it
  PREFIX_peers.png       with --peer: Cerium and each peer side by side on the operations both measured

Options:
  --out-dir DIR          where the PNGs go (default docs/figures)
  --prefix NAME          file name prefix (default: gpu or cpu, after the benchmarks' names)
  --title TEXT           added to every figure's title (default: the device the JSON names)
  --peer NAME=FILE       a peer's figures: Google Benchmark JSON, the JSON lines of bench/peers/openfhe/openfhe_cpu
                         (its "type": "timing" objects), or the log of ../shared/peers/desilo_bench.py (its
                         `RESULT <operation> median <t> ms` lines); repeatable
  --filter REGEX         only benchmarks whose name matches
  --dpi N                resolution (default 100; the figures stay well under 200 KB)

Repetitions: the `median` aggregate is used where the JSON has one, else the median of the runs of a name.
Needs Matplotlib (Debian: python3-matplotlib, scripts/setup-debian.sh --docs).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
from collections import OrderedDict, defaultdict


def import_matplotlib():
    try:
        import matplotlib
    except ImportError:
        # Debian's python3-matplotlib belongs to /usr/bin/python3; another python3 may come first on PATH.
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath(
                "/usr/bin/python3") and not os.environ.get("CERIUM_PLOT_REEXEC"):
            os.environ["CERIUM_PLOT_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.exit("plot-bench: Matplotlib is missing (Debian: apt-get install python3-matplotlib, or "
                 "scripts/setup-debian.sh --docs)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
# name parts that describe how a benchmark ran, not what it measured
RUN_PARTS = re.compile(r"^(iterations|repeats|min_time|threads|min_warmup_time):|^(manual_time|real_time|process_time)$")


class Run:
    """One benchmark instance: its family, arguments, time in microseconds and counters."""

    def __init__(self, name, us, counters, label, source):
        self.name = name
        parts = name.split("/")
        self.family = parts[0]
        self.args = OrderedDict()   # "key:value" parts
        self.positional = []        # bare values
        for p in parts[1:]:
            if RUN_PARTS.match(p):
                continue
            if ":" in p:
                k, v = p.split(":", 1)
                self.args[k] = v
            else:
                self.positional.append(p)
        self.us = us
        self.counters = counters
        self.label = label
        self.source = source

    def counter(self, key):
        v = self.counters.get(key)
        return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def load_runs(path, name_filter=None):
    """The runs of one Google Benchmark JSON: medians where repetitions were aggregated."""
    with open(path) as f:
        data = json.load(f)
    context = data.get("context", {})
    rows = data.get("benchmarks", [])
    by_name = OrderedDict()
    medians = {}
    for row in rows:
        run_name = row.get("run_name", row.get("name", ""))
        if row.get("error_occurred"):
            print(f"plot-bench: {path}: {run_name} reported an error ({row.get('error_message', '')}): left out")
            continue
        if row.get("run_type") == "aggregate":
            if row.get("aggregate_name") == "median":
                medians[run_name] = row
            continue
        by_name.setdefault(run_name, []).append(row)
    for name in medians:
        by_name.setdefault(name, [])
    runs = []
    skip = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
            "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index", "aggregate_name",
            "aggregate_unit", "label", "error_occurred", "error_message"}
    for name, group in by_name.items():
        if name_filter and not re.search(name_filter, name):
            continue
        rows_of = [medians[name]] if name in medians else group
        if not rows_of:
            continue
        first = rows_of[0]
        unit = UNIT_TO_US.get(first.get("time_unit", "ns"), 1e-3)
        us = statistics.median(r["real_time"] for r in rows_of) * unit
        counters = {}
        for key in first:
            if key in skip:
                continue
            values = [r[key] for r in rows_of if isinstance(r.get(key), (int, float))]
            if values:
                counters[key] = statistics.median(values)
        runs.append(Run(name, us, counters, first.get("label", ""), path))
    return runs, context


def device_of(runs, context):
    labels = [r.label for r in runs if r.label]
    if labels:
        return max(set(labels), key=labels.count)
    cpus = context.get("num_cpus")
    host = context.get("host_name", "")
    return f"{host} CPU, {cpus} threads" if cpus else host


def fmt_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def time_axis(values_us):
    """A unit that keeps the values readable: (divisor from microseconds, name)."""
    top = max(values_us) if values_us else 1
    if top >= 2e6:
        return 1e6, "s"
    if top >= 2e3:
        return 1e3, "ms"
    return 1.0, "us"


SIZE_COUNTERS = ("N", "limbs", "in_limbs", "out_limbs", "dnum", "alpha")


def series_label(run, exclude, varying):
    """What tells this run from the others of its family (the x-axis variable aside)."""
    parts = [f"{k}={v}" for k, v in run.args.items() if k not in exclude and ("arg", k) in varying]
    parts += [f"arg{i + 1}={v}" for i, v in enumerate(run.positional) if ("pos", i) in varying]
    for key in SIZE_COUNTERS:
        v = run.counter(key)
        if key not in exclude and v is not None and ("counter", key) in varying:
            parts.append(f"N=2^{int(math.log2(v))}" if key == "N" and v > 0 else f"{key}={int(v)}")
    return ", ".join(parts) if parts else "all"


def field_value(run, field):
    """One of varying_fields' fields of a run: an argument, a bare argument or a size counter."""
    kind, name = field
    if kind == "arg":
        return run.args.get(name)
    if kind == "pos":
        return run.positional[name] if name < len(run.positional) else None
    return run.counter(name)


def varying_fields(members):
    """The arguments and size counters that take more than one value within a family."""
    values = defaultdict(set)
    for r in members:
        for k, v in r.args.items():
            values[("arg", k)].add(v)
        for i, v in enumerate(r.positional):
            values[("pos", i)].add(v)
        for key in SIZE_COUNTERS:
            values[("counter", key)].add(r.counter(key))
    varying = {k for k, v in values.items() if len(v) > 1}
    # a bare argument that repeats a size counter (ntt_forward_cpu/65536/8: N and limbs) is that counter
    for field in [f for f in varying if f[0] == "pos"]:
        i = field[1]
        for key in SIZE_COUNTERS:
            if all(r.counter(key) is not None and i < len(r.positional) and r.positional[i] == f"{r.counter(key):g}"
                   for r in members):
                varying.discard(field)
                break
    return varying


def log_axis_labels(axis):
    """Plain numbers (1, 10, 0.1, 300) on a log axis instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.axes.autoscale_view()
    lo, hi = axis.get_view_interval()
    if hi / max(lo, 1e-300) < 300:
        # within two decades or so, label 2 and 5 of each decade too
        def minor(v, _):
            return f"{v:g}" if v > 0 and round(v / 10 ** math.floor(math.log10(v) + 1e-9)) in (2, 5) else ""
        axis.set_minor_formatter(FuncFormatter(minor))
    else:
        axis.set_minor_formatter(NullFormatter())


def plot_scaling(plt, runs, out, title, dpi):
    """(a) time against limbs or N, per operation, with the memory floor where floor_ratio exists."""
    families = OrderedDict()
    for r in runs:
        families.setdefault(r.family, []).append(r)
    panels = []
    for family, members in families.items():
        best = None
        for key in ("limbs", "N", "in_limbs"):
            values = {r.counter(key) for r in members if r.counter(key) is not None}
            if len(values) >= 2 and (best is None or len(values) > best[1]):
                best = (key, len(values))
        if best is None:
            continue
        key = best[0]
        series = OrderedDict()
        varying = varying_fields(members)
        # a field that moves with the x-axis variable (in_limbs with N, the level argument with limbs) names no
        # series of its own
        for field in list(varying):
            if field == ("counter", key):
                continue
            pairs = {(r.counter(key), field_value(r, field)) for r in members}
            if len(pairs) == len({x for x, _ in pairs}):
                varying.discard(field)
        for r in members:
            if r.counter(key) is None:
                continue
            series.setdefault(series_label(r, {key}, varying), []).append(r)
        # a sweep is a series with at least two points; lone points of other sizes are drawn as markers
        if not any(len(s) >= 2 for s in series.values()):
            print(f"plot-bench: scaling: {family}: no two runs differ in {key} alone: left out")
            continue
        panels.append((family, key, series))
    swept = {family for family, _, _ in panels}
    if not panels:
        print("plot-bench: scaling: no operation was measured at two or more limb counts or ring degrees: skipped")
        return swept
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.5 * rows), squeeze=False)
    any_floor = False
    for ax, (family, key, series) in zip(axes.flat, panels):
        all_us = [r.us for s in series.values() for r in s]
        div, unit = time_axis(all_us)
        for i, (label, members) in enumerate(series.items()):
            members.sort(key=lambda r: r.counter(key))
            xs = [r.counter(key) for r in members]
            ys = [r.us / div for r in members]
            color = f"C{i % 10}"
            style = "o-" if len(members) >= 2 else "o"
            ax.plot(xs, ys, style, color=color, label=label, markersize=4)
            floors = [(r.counter(key), r.us / r.counter("floor_ratio") / div) for r in members
                      if r.counter("floor_ratio")]
            if floors:
                any_floor = True
                fx, fy = zip(*floors)
                if len(floors) >= 2:
                    ax.plot(fx, fy, "--", color=color, linewidth=1, alpha=0.8)
                else:
                    ax.plot(fx, fy, "_", color=color, markersize=9, markeredgewidth=1.5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        log_axis_labels(ax.yaxis)
        ax.set_xlabel("limbs" if key != "N" else "N (ring degree)")
        ax.set_ylabel(f"time ({unit})")
        ax.set_title(family, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    # The note on its own line: a one-panel figure is too narrow for it beside the heading.
    note = "\ndashed: memory floor (time / floor_ratio)" if any_floor else ""
    fig.suptitle(f"Time against size{note}\n{title}", fontsize=10 if cols == 1 else 11)
    fig.tight_layout()
    save(fig, plt, out, dpi)
    return swept


def plot_floor(plt, runs, swept, out, title, dpi):
    """Operations measured at one size: time beside the memory floor (time / floor_ratio)."""
    chosen = [r for r in runs if r.family not in swept and r.counter("floor_ratio") and
              not r.family.startswith("BM_bootstrap")]
    if not chosen:
        print("plot-bench: floor: no benchmark outside the sweeps reports floor_ratio: skipped")
        return
    order = {f: i for i, f in enumerate(OrderedDict.fromkeys(r.family for r in chosen))}
    chosen.sort(key=lambda r: (order[r.family], r.name))
    div, unit = time_axis([r.us for r in chosen])
    names = [short_name(r) for r in chosen]
    height = max(2.5, 0.28 * len(chosen) + 1.2)
    fig, ax = plt.subplots(figsize=(8.5, height))
    ys = range(len(chosen))
    ax.barh(ys, [r.us / div for r in chosen], color="C0", label="measured")
    ax.barh(ys, [r.us / r.counter("floor_ratio") / div for r in chosen], color="C1", height=0.35,
            label="memory floor")
    for y, r in zip(ys, chosen):
        ax.text(r.us / div, y, f" {r.counter('floor_ratio'):.2f}x", va="center", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    log_axis_labels(ax.xaxis)
    ax.set_xlabel(f"time ({unit}), log scale")
    ax.set_xlim(right=max(r.us for r in chosen) / div * 2.5)
    ax.legend(fontsize=8, ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"Operations at one size: time and memory floor (the ratio at the bar's end)\n{title}",
                 fontsize=10)
    fig.tight_layout()
    save(fig, plt, out, dpi)


def short_name(run):
    parts = [run.family] + [f"{k}:{v}" for k, v in run.args.items()] + run.positional
    extra = []
    for key in ("N", "limbs", "dnum"):
        v = run.counter(key)
        if v is not None and not any(p.startswith(key + ":") for p in parts):
            extra.append(f"{key} {int(v)}" if key != "N" else f"N 2^{int(math.log2(v))}")
    name = "/".join(parts)
    return f"{name} ({', '.join(extra)})" if extra else name


STAGE = re.compile(r"^ms_(.+)$")


def plot_bootstrap(plt, runs, out, title, dpi):
    """(b) the per-stage breakdown of each bootstrap that reports ms_<stage> counters."""
    boots = [r for r in runs if any(STAGE.match(k) for k in r.counters)]
    if not boots:
        if any("bootstrap" in r.family for r in runs):
            print("plot-bench: bootstrap: the bootstrap benchmarks report no ms_<stage> counters "
                  "(bench/gpu/bench_bootstrap_gpu.cpp writes them): skipped")
        else:
            print("plot-bench: bootstrap: no bootstrap benchmark in the input: skipped")
        return
    stages = []
    for r in boots:
        for k in r.counters:
            m = STAGE.match(k)
            if m and m.group(1) not in stages:
                stages.append(m.group(1))
    # the order a bootstrap runs them in (Google Benchmark writes counters sorted by name)
    pipeline = ["scale_down", "mod_raise", "sub_sum", "coeff_to_slot", "eval_mod", "eval_mod_x2", "slot_to_coeff"]
    stages.sort(key=lambda s: pipeline.index(s) if s in pipeline else len(pipeline))
    fig, ax = plt.subplots(figsize=(8.5, 1.2 + 0.75 * len(boots) + 0.2 * len(stages)))
    labels = []
    for y, r in enumerate(boots):
        left = 0.0
        for i, s in enumerate(stages):
            v = r.counter("ms_" + s) or 0.0
            ax.barh(y, v, left=left, color=f"C{i % 10}", label=s.replace("_", " ") if y == 0 else None,
                    edgecolor="white", linewidth=0.5)
            if v > 0.06 * (r.us / 1e3):
                ax.text(left + v / 2, y, f"{v:.1f}", ha="center", va="center", fontsize=7, color="white")
            left += v
        whole = r.us / 1e3
        ax.plot([whole, whole], [y - 0.4, y + 0.4], color="black", linewidth=2)
        ax.text(whole, y + 0.42, f" whole {whole:.1f} ms", fontsize=7, va="bottom")
        graph = r.counter("graph_ms")
        if graph:
            ax.plot([graph, graph], [y - 0.4, y + 0.4], color="black", linestyle=":", linewidth=1.5)
        args = ", ".join(f"{k} {v}" for k, v in r.args.items())
        n = r.counter("N")
        head = r.family.replace("BM_", "")
        if n:
            head += f" (N 2^{int(math.log2(n))}" + (f", {int(r.counter('slots'))} slots" if r.counter("slots") else "") + ")"
        labels.append(head + (f"\n{args}" if args else ""))
    ax.set_yticks(range(len(boots)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ms (stages timed one by one, stacked; bar: the whole bootstrap"
                  + ("; dotted: as a CUDA graph" if any(r.counter("graph_ms") for r in boots) else "") + ")",
                  fontsize=8)
    ax.set_xlim(0, max(max(r.us / 1e3, sum(r.counter("ms_" + s) or 0 for s in stages)) for r in boots) * 1.18)
    ax.legend(fontsize=7, ncol=min(len(stages), 6), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"Bootstrap: time by stage\n{title}", fontsize=10)
    fig.tight_layout()
    save(fig, plt, out, dpi)


# Operations compared across libraries: a canonical name and how each side names it.
PEER_OPS = [
    ("bootstrap", re.compile(r"bootstrap", re.I)),
    ("multiply + relinearize + rescale",
     re.compile(r"multiply.?relin\w*.?rescale|MultiplyRelinRescale|^BM_MultiplyRescale(/|$)|^BM_multiply_rescale_gpu",
                re.I)),
    ("rotate", re.compile(r"^(BM_)?rotate(_gpu|_cpu)?(/|$)|^rotate by|^BM_Rotate(/|$)", re.I)),
    ("key switch", re.compile(r"key.?switch", re.I)),
    ("relinearize", re.compile(r"^relinearize", re.I)),
]


def canonical_op(name):
    for op, pattern in PEER_OPS:
        if pattern.search(name):
            if op == "bootstrap" and re.search(r"precision|cold|first", name, re.I):
                return None
            return op
    return None


RESULT_LINE = re.compile(r"^RESULT\s+(.+?)\s+median\s+([0-9.]+)\s*ms")


def load_peer(path):
    """{operation: (microseconds, what was measured, log2 N or None)} from a peer's Google Benchmark JSON, JSON
    lines (openfhe_cpu) or desilo_bench.py log."""
    ops = {}
    try:
        with open(path) as f:
            text = f.read()
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict) and "benchmarks" in data:
        runs, _ = load_runs(path)
        for r in runs:
            op = canonical_op(r.name)
            if op and (op not in ops or r.us < ops[op][0]):
                ops[op] = (r.us, r.name, log2_n(r))
        return ops
    # One JSON object a line with "type": "timing" (bench/peers/openfhe/openfhe_cpu).
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(row, dict) or row.get("type") != "timing" or "median_ms" not in row:
            continue
        op = canonical_op(str(row.get("operation", "")))
        us = float(row["median_ms"]) * 1e3
        log_n = int(round(math.log2(row["N"]))) if row.get("N") else None
        label = f"{row.get('operation')} ({row.get('preset', '?')}, {row.get('threads', '?')} threads)"
        if op and (op not in ops or us < ops[op][0]):
            ops[op] = (us, label, log_n)
    if ops:
        return ops
    m = re.search(r"log2 N\s+(\d+)", text)
    log_n = int(m.group(1)) if m else None
    for line in text.splitlines():
        m = RESULT_LINE.match(line.strip())
        if not m:
            continue
        name, ms = m.group(1).strip(), float(m.group(2))
        op = canonical_op(name)
        if op and (op not in ops or ms * 1e3 < ops[op][0]):
            ops[op] = (ms * 1e3, name, log_n)
    return ops


def log2_n(run):
    n = run.counter("N")
    return int(round(math.log2(n))) if n else None


def plot_peers(plt, runs, peers, out, title, dpi):
    """(c) Cerium and each peer on the operations both measured (Cerium: its fastest configuration)."""
    ours = {}
    for r in runs:
        op = canonical_op(r.name)
        if op and (op not in ours or r.us < ours[op][0]):
            ours[op] = (r.us, r.name, log2_n(r))
    tables = [("Cerium", ours)] + peers
    ops = [op for op, _ in PEER_OPS if op in ours and any(op in t for _, t in peers)]
    if not ops:
        print("plot-bench: peers: no operation measured by both Cerium and a peer "
              f"(Cerium: {sorted(ours) or 'none'}; peers: {[sorted(t) for _, t in peers]}): skipped")
        return
    fig, axes = plt.subplots(1, len(ops), figsize=(3.2 * len(ops) + 0.8, 3.6), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        names = [n for n, t in tables if op in t]
        values = [dict(tables)[n][op][0] for n in names]
        div, unit = time_axis(values)
        bars = ax.bar(range(len(names)), [v / div for v in values], color=[f"C{i}" for i in range(len(names))])
        for b, v in zip(bars, values):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), fmt_time(v), ha="center", va="bottom",
                    fontsize=8)
        ax.set_xticks(range(len(names)))
        sizes = [dict(tables)[n][op][2] for n in names]
        ax.set_xticklabels([n + (f"\nN 2^{k}" if k else "\nN ?") for n, k in zip(names, sizes)], fontsize=8)
        if len(set(sizes)) > 1:
            print(f"plot-bench: peers: {op}: the ring degrees differ or are unknown (log2 N: {sizes})")
        ax.set_ylabel(f"time ({unit})")
        ax.set_ylim(0, max(v / div for v in values) * 1.18)
        ax.set_title(op, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"Side by side (lower is better; Cerium: its fastest configuration)\n{title}", fontsize=10)
    fig.tight_layout()
    save(fig, plt, out, dpi)
    for op in ops:
        line = "; ".join(f"{n}: {fmt_time(t[op][0])} ({t[op][1]})" for n, t in tables if op in t)
        print(f"plot-bench: peers: {op}: {line}")


def save(fig, plt, path, dpi):
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    size = os.path.getsize(path)
    print(f"plot-bench: wrote {path} ({size // 1024} KB)")
    if size > 200 * 1024:
        print(f"plot-bench: {path} is over 200 KB: lower --dpi")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out-dir", default=None)
    parser.add_argument("--prefix", default=None)
    parser.add_argument("--title", default=None)
    parser.add_argument("--peer", action="append", default=[])
    parser.add_argument("--filter", default=None)
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args()
    plt = import_matplotlib()

    runs, context = [], {}
    for path in args.inputs:
        try:
            r, c = load_runs(path, args.filter)
        except (OSError, json.JSONDecodeError) as ex:
            sys.exit(f"plot-bench: {path}: not a Google Benchmark JSON file ({ex})")
        print(f"plot-bench: {path}: {len(r)} benchmarks")
        runs += r
        context = context or c
    if not runs:
        sys.exit("plot-bench: no benchmarks in the input")
    peers = []
    for spec in args.peer:
        if "=" not in spec:
            sys.exit(f"plot-bench: --peer {spec}: expected NAME=FILE")
        name, path = spec.split("=", 1)
        table = load_peer(path)
        print(f"plot-bench: peer {name}: {path}: {len(table)} operations ({', '.join(sorted(table)) or 'none'})")
        peers.append((name, table))

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = args.out_dir or os.path.join(repo, "docs", "figures")
    os.makedirs(out_dir, exist_ok=True)
    prefix = args.prefix or ("gpu" if any(r.family.endswith("_gpu") for r in runs) else "cpu")
    date = str(context.get("date", ""))[:10]
    title = args.title or device_of(runs, context) + (f", measured {date}" if date else "")

    swept = plot_scaling(plt, runs, os.path.join(out_dir, f"{prefix}_scaling.png"), title, args.dpi)
    plot_floor(plt, runs, swept, os.path.join(out_dir, f"{prefix}_floor.png"), title, args.dpi)
    plot_bootstrap(plt, runs, os.path.join(out_dir, f"{prefix}_bootstrap.png"), title, args.dpi)
    if peers:
        plot_peers(plt, runs, peers, os.path.join(out_dir, f"{prefix}_peers.png"), title, args.dpi)
    else:
        print("plot-bench: peers: no --peer given: skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
