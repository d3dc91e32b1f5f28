#!/usr/bin/env python3
"""Per-symbol instruction counts of make bench's experiment "insns".

QEMU's insn-plugin (scripts/insn-plugin.c) wrote, per boot, the guest
instructions executed at each address in every window between two of
migbench -I's markers; the boot's output (guest/bench.sh) has one "insns"
rep per marked move, in the same order. This attributes each address to
the kernel symbol containing it (System.map of the kernel that booted),
and reports per folio size: instructions per migrated folio of vanilla and
of the patched kernel with no migrator selected (every boot and rep, since
the counts are exact there is no interval to compute: the spread is the
range), and the symbols whose count differs most between the two.

Usage: insn-report.py --build vanilla=DIR --build patched=DIR
       --out results/bench-insns.md results/bench-*.insns
(each FILE.insns next to its FILE.out; DIR: the kernel's build directory,
whose System.map and objects name each address's symbol and object)."""
import argparse
import bisect
import json
import os
import subprocess
import sys
from collections import defaultdict

USER_TOP = 0x800000000000	# x86-64: below is user space
TOP_SYMBOLS = 15


def load_map(path):
    """Sorted text symbols of a System.map: (addresses, names)."""
    syms = []
    with open(path) as f:
        for line in f:
            addr, kind, name = line.split()[:3]
            if kind in "tTwW":
                syms.append((int(addr, 16), name))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def load_sources(build):
    """Which object defines each text symbol: from nm of every object of
    the kernel's build directory ("?" for a name several objects define)."""
    objs = []
    for root, _, files in os.walk(build):
        objs += [os.path.join(root, f) for f in files
                 if f.endswith(".o") and not f.endswith(".mod.o") and f != "vmlinux.o"]
    where = {}
    for i in range(0, len(objs), 500):
        out = subprocess.run(["nm", "-A", "--defined-only"] + objs[i:i + 500],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            obj, _, rest = line.rpartition(":")
            parts = rest.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                src = os.path.relpath(obj, build)
                where[parts[2]] = src if where.get(parts[2], src) == src else "?"
    return where


def symbol(smap, addr):
    if addr < USER_TOP:
        return "[user space]"
    addrs, names = smap
    i = bisect.bisect_right(addrs, addr) - 1
    return names[i] if i >= 0 else "[unknown]"


def read_windows(path):
    """The plugin's windows: a list of {address: instructions}."""
    windows = []
    with open(path) as f:
        for line in f:
            if line.startswith("window "):
                windows.append({})
            else:
                addr, n = line.split()
                windows[-1][int(addr, 16)] = int(n)
    return windows


def read_reps(path):
    """The boot's "insns" objects in order: reps, and failed reps as None."""
    reps = []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if o.get("exp") != "insns" or o["type"] not in ("rep", "error"):
                continue
            reps.append(o if o["type"] == "rep" else None)
    return reps


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="the plugin's outputs, bench-KERNEL-BOOT.insns")
    ap.add_argument("--build", action="append", default=[],
                    help="KERNEL=DIR: the kernel's build directory (System.map, objects)")
    ap.add_argument("--out", required=True, help="the Markdown report")
    args = ap.parse_args()
    builds = dict(b.split("=", 1) for b in args.build)
    maps = {k: load_map(os.path.join(d, "System.map")) for k, d in builds.items()}
    sources = {}
    for d in builds.values():
        for sym, src in load_sources(d).items():
            sources[sym] = src if sources.get(sym, src) == src else "?"

    # (folio_kb, folios per call, kernel) -> one {symbol: instructions
    # per folio} per rep
    runs = defaultdict(list)
    bad = []
    for path in sorted(args.files):
        kernel = os.path.basename(path).split("-")[1]
        windows = read_windows(path)
        reps = read_reps(path[:-len(".insns")] + ".out")
        # a window ends at each marker: window 0 runs up to the first one,
        # each marked move is an odd window, what runs between moves even
        if len(windows) != 2 * len(reps) or any(r is None for r in reps):
            bad.append(f"{path}: {len(windows)} windows for {len(reps)} marked moves"
                       f" ({sum(r is None for r in reps)} failed): not used")
            continue
        for k, rep in enumerate(reps):
            folios = rep["total_mb"] * 1024 / rep["folio_kb"]
            per_sym = defaultdict(float)
            for addr, n in windows[2 * k + 1].items():
                per_sym[symbol(maps[kernel], addr)] += n / folios
            runs[rep["folio_kb"], rep["folios_per_call"], kernel].append(per_sym)

    def src(sym):
        return sources.get(sym, "-")

    def total(run, skip=None):
        return sum(n for s, n in run.items() if src(s) != skip)

    def cell(v):
        return f"{sum(v) / len(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}]"

    def ratio(p, v):
        return (f"{(sum(p) / len(p)) / (sum(v) / len(v)):.4f} "
                f"[{min(p) / max(v):.4f}-{max(p) / min(v):.4f}]")

    def mean(rs, key):
        acc = defaultdict(float)
        for r in rs:
            for s, n in r.items():
                acc[key(s)] += n / len(rs)
        return acc

    alloc = "mm/page_alloc.o"
    cases = sorted({(kb, fpc) for kb, fpc, _ in runs
                    if runs[kb, fpc, "vanilla"] and runs[kb, fpc, "patched"]})
    out = ["# Instructions per migrated folio, by kernel symbol", "",
           "The patched kernel with no migrator selected against vanilla: guest instructions "
           "executed by every vCPU from just before migbench's first move_pages() call of a rep "
           "to just after its last, per folio moved (QEMU plugin scripts/insn-plugin.c; with "
           "`-icount` and one TCG thread every count is exact, so a range below is the boots' and "
           "reps' own variation, not measurement noise). Ranges: lowest and highest run; the "
           f"ratio's range pairs the extremes. Without `{alloc}`: the same counts without the "
           "buddy allocator, whose work per folio depends on the state of the free lists "
           "(merging), which differs from boot to boot and rep to rep in either kernel.", ""]
    out += [f"- {b}" for b in bad]
    out += ["", f"| folio, per call | vanilla | patched | patched / vanilla | vanilla without {alloc} "
            "| patched without | ratio without | runs |", "|---|---|---|---|---|---|---|---|"]
    for kb, fpc in cases:
        v, p = runs[kb, fpc, "vanilla"], runs[kb, fpc, "patched"]
        tv, tp = [total(r) for r in v], [total(r) for r in p]
        av, ap_ = [total(r, alloc) for r in v], [total(r, alloc) for r in p]
        out.append(f"| {kb}K, {fpc:g} | {cell(tv)} | {cell(tp)} | {ratio(tp, tv)} | {cell(av)} "
                   f"| {cell(ap_)} | {ratio(ap_, av)} | {len(v)} + {len(p)} |")
    for kb, fpc in cases:
        v, p = runs[kb, fpc, "vanilla"], runs[kb, fpc, "patched"]
        base = sum(total(r) for r in v) / len(v)
        for title, key, top in (("objects", src, 8), ("symbols", lambda s: s, TOP_SYMBOLS)):
            mv, mp = mean(v, key), mean(p, key)
            diff = sorted(set(mv) | set(mp), key=lambda s: -abs(mp.get(s, 0) - mv.get(s, 0)))
            out += ["", f"## {kb}K folios, {fpc:g} per call: the {top} {title} that differ most, "
                    "per folio", "",
                    "| | vanilla | patched | difference | of vanilla's total |", "|---|---|---|---|---|"]
            for s in diff[:top]:
                a, b = mv.get(s, 0), mp.get(s, 0)
                name = f"`{s}` ({src(s)})" if key is not src else f"`{s}`"
                out.append(f"| {name} | {a:,.1f} | {b:,.1f} | {b - a:+,.1f} | {(b - a) / base:+.3%} |")
    text = "\n".join(out) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
