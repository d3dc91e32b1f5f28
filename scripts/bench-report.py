#!/usr/bin/env python3
"""Combine the JSON lines that guest/bench.sh wrote for each kernel into
results/bench.json, a Markdown table (bench.md, also printed) and a plot
(bench.png). Ratios are what matter under TCG: every figure in one table was
measured in the same make bench run."""
import argparse
import json
import sys

FOLIO_KB = [4, 16, 64, 256, 2048]


def folio_label(kb):
    return f"{kb // 1024}M" if kb >= 1024 else f"{kb}K"


def read_lines(paths):
    objs = []
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        objs.append(json.loads(line))
                    except json.JSONDecodeError:
                        print(f"{path}: bad JSON line: {line[:80]}", file=sys.stderr)
    return objs


def config_key(run):
    return (run["kernel"], run["migrator"], run["threads"])


def config_name(key):
    kernel, migrator, threads = key
    if kernel == "vanilla":
        return "vanilla"
    if migrator == "none":
        return "patched default"
    if migrator == "dcbm":
        return f"dcbm {threads}ch"
    return f"{migrator}" + (f" x{threads}" if migrator not in ("kernel", "none") else "")


def build(objs):
    runs = [o for o in objs if o.get("type") == "move"]
    # migbench's own thread count names the memcpy threads; keep that one.
    memcpy = [{"kernel": o["kernel"], "threads": o.get("copy_threads", o["threads"]),
               "dst_offset": o.get("dst_offset", 0), "gbps": o["gbps"]}
              for o in objs if o.get("type") == "memcpy"]
    for r in runs:
        r.pop("type", None)
    fractions = [o for o in objs if o.get("type") == "copy_fraction"]
    for f in fractions:
        f["fraction"] = f["copy_s"] / f["move_s"] if f["move_s"] else None
    latency = [o for o in objs if o.get("type") == "latency"]
    overhead = [o for o in objs if o.get("type") == "dcbm_overhead"]
    paired = [o for o in objs if o.get("type") == "paired"]
    default_latency = [o for o in objs if o.get("type") == "default_latency"]
    return {"runs": runs, "memcpy": memcpy, "copy_fraction": fractions, "latency": latency,
            "dcbm_overhead": overhead, "paired": paired, "default_latency": default_latency}


def table(data):
    runs = data["runs"]
    base = {r["folio_kb"]: r for r in runs if r["kernel"] == "vanilla"}
    keys = []
    for r in runs:
        k = config_key(r)
        if r["kernel"] != "vanilla" and k not in keys:
            keys.append(k)
    sizes = [kb for kb in FOLIO_KB if any(r["folio_kb"] == kb for r in runs)]
    fractions = {f["folio_kb"]: f["fraction"] for f in data["copy_fraction"]
                 if f["migrator"] == "kernel" and f["fraction"] is not None}
    head = ["folio", "vanilla GB/s"]
    for k in keys:
        head += [f"{config_name(k)} GB/s", f"{config_name(k)} / vanilla"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kb in sizes:
        b = base.get(kb)
        row = [folio_label(kb), fmt_run(b)]
        for k in keys:
            r = next((x for x in runs if config_key(x) == k and x["folio_kb"] == kb), None)
            row.append(fmt_run(r))
            ratio = f"{r['gbps'] / b['gbps']:.3f} / {r['gbps_max'] / b['gbps_max']:.3f}" if r and b else "-"
            f = fractions.get(kb)
            if r and b and f is not None and k[1] not in ("kernel", "none"):
                ratio += f" (Amdahl {amdahl(f, k[2]):.2f})"
            row.append(ratio)
        lines.append("| " + " | ".join(row) + " |")
    total = {r["total_mb"] for r in runs}
    out = [f"move_pages() node0 -> node1, {'/'.join(map(str, sorted(total)))} MiB, "
           "median of the repetitions [min-max]; every byte and page node verified.",
           "Ratios are against vanilla, of the medians / of the best reps; for offloading",
           "migrators, (Amdahl N) is the bound 1/((1-F)+F/N) from the copy fraction F",
           "measured with the kernel migrator. dcbm runs on swdma, a software DMA engine",
           "whose channels are kernel threads copying with the CPU: its rows show the cost",
           "of the DMA path, not what DMA hardware would give.",
           "Under QEMU TCG a 2M folio copy is slowed by softmmu TLB aliasing by a factor",
           "that depends on the emulator's TLB state (see README), so for 2M compare the",
           "best reps.", ""]
    out += lines
    unverified = [r for r in runs if not r.get("verified")]
    if unverified:
        out += ["", f"**{len(unverified)} runs NOT verified**"]
    if data["memcpy"]:
        out += ["", "In-guest memcpy bandwidth (the copy bound), destination at the same offset",
                "modulo 2 MiB as the source (aliased in QEMU's TLB, as a 2M folio copy is) or",
                "64 KiB further:", "",
                "| kernel | threads | dst offset | GB/s |", "|---|---|---|---|"]
        out += [f"| {m['kernel']} | {m['threads']} | {offset_label(m['dst_offset'])} | {m['gbps']:.3f} |"
                for m in data["memcpy"]]
    out += default_table(data) + fraction_table(data) + paired_table(data) + overhead_table(data)
    out += latency_table(data)
    return "\n".join(out) + "\n"


def offset_label(offset):
    return f"+{offset // 1024}K" if offset else "aliased"


def amdahl(f, n):
    return 1 / ((1 - f) + f / n)


def default_table(data):
    """The patched kernel with no migrator selected against vanilla."""
    runs = {(r["kernel"], r["folio_kb"]): r for r in data["runs"] if r["migrator"] == "none"}
    lat = {(r["kernel"], r["folio_kb"]): r for r in data["default_latency"]}
    sizes = sorted({kb for _, kb in runs} | {kb for _, kb in lat})
    if not any(k == "patched" for k, _ in runs):
        return []
    out = ["", "Patched kernel at its defaults (no migrator selected: the batch path is",
           "patched out) against vanilla. Throughput: medians / best reps. First-folio",
           "latency: from mm_migrate_pages_start to the first remove_migration_pte/pmd of",
           "that call, tracepoints vanilla has; median over the calls of a 64 MiB move.", "",
           "| folio | vanilla GB/s | patched GB/s | patched / vanilla | vanilla first ms "
           "| patched first ms | patched / vanilla |", "|---|---|---|---|---|---|---|"]
    for kb in sizes:
        v, p = runs.get(("vanilla", kb)), runs.get(("patched", kb))
        lv, lp = lat.get(("vanilla", kb)), lat.get(("patched", kb))
        ratio = f"{p['gbps'] / v['gbps']:.3f} / {p['gbps_max'] / v['gbps_max']:.3f}" if v and p else "-"
        lratio = (f"{lp['first_ms_median'] / lv['first_ms_median']:.3f}"
                  if lv and lp and lv["first_ms_median"] else "-")
        ms = [f"{x['first_ms_median']:.3f}" if x else "-" for x in (lv, lp)]
        out.append(f"| {folio_label(kb)} | {fmt_run(v)} | {fmt_run(p)} | {ratio} "
                   f"| {ms[0]} | {ms[1]} | {lratio} |")
    return out


def fraction_table(data):
    rows = [f for f in data["copy_fraction"] if f["migrator"] == "kernel" and f["fraction"] is not None]
    if not rows:
        return []
    out = ["", "Copy fraction F of move_pages() time (batch-copy tracepoints, migrator kernel),",
           "and the Amdahl bound on the speedup of a copy N times faster:", "",
           "| folio | copy s | move_pages s | F | bound N=2 | bound N=4 | bound N=inf |",
           "|---|---|---|---|---|---|---|"]
    for f in sorted(rows, key=lambda f: f["folio_kb"]):
        x = f["fraction"]
        out.append(f"| {folio_label(f['folio_kb'])} | {f['copy_s']:.3f} | {f['move_s']:.3f} | {x:.3f} "
                   f"| {amdahl(x, 2):.2f} | {amdahl(x, 4):.2f} | {1 / (1 - x) if x < 1 else float('inf'):.2f} |")
    return out


def paired_table(data):
    rows = data["paired"]
    if not rows:
        return []
    runs = data["runs"]
    vanilla = next((r for r in runs if r["kernel"] == "vanilla" and r["folio_kb"] == 2048), None)
    kernel = next((r for r in runs if r["migrator"] == "kernel" and r["folio_kb"] == 2048), None)
    base = kernel["gbps_max"] / vanilla["gbps_max"] if kernel and vanilla else None
    f = next((x["fraction"] for x in data["copy_fraction"]
              if x["migrator"] == "kernel" and x["folio_kb"] == 2048 and x["fraction"] is not None), None)
    out = ["", "2M folios, paired: the kernel migrator and the offloading one alternate rep by",
           "rep, so both meet the same emulator state; median of the pairwise ratios [min-max].",
           "Over vanilla = that ratio x kernel/vanilla of the best 2M reps"
           + (f" ({base:.3f})" if base else "") + "; the bound is 1/((1-F)+F/N) with F of 2M.", "",
           "| migrator | pairs | / kernel | over vanilla | Amdahl bound | share of bound |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        n = r["threads"]
        over = r["ratio_median"] * base if base else None
        bound = amdahl(f, n) if f is not None else None
        out.append(f"| {config_name(config_key(r))} | {r['pairs']} "
                   f"| {r['ratio_median']:.3f} [{r['ratio_min']:.3f}-{r['ratio_max']:.3f}] "
                   f"| {f'{over:.3f}' if over else '-'} | {f'{bound:.2f}' if bound else '-'} "
                   f"| {f'{over / bound:.2f}' if over and bound else '-'} |")
    return out


def overhead_table(data):
    rows = data["dcbm_overhead"]
    if not rows:
        return []
    out = ["", "dcbm time per batch (dcbm_batch tracepoint, mean us): setup = folio table,",
           "channels and DMA mapping; submit = preparing and issuing descriptors (the engine",
           "already copies); wait = until the last completion; finish = marking and unmapping.",
           "Overhead = (setup + finish) / (setup + submit + wait + finish).", "",
           "| channels | folio | batches | KiB/batch | descs/batch | setup | submit | wait | finish "
           "| overhead | failed |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["threads"], r["folio_kb"])):
        total = r["setup_us"] + r["submit_us"] + r["wait_us"] + r["finish_us"]
        share = (r["setup_us"] + r["finish_us"]) / total if total else 0
        out.append(f"| {r['threads']} | {folio_label(r['folio_kb'])} | {r['batches']} | {r['bytes'] // 1024} "
                   f"| {r['descs']:.1f} | {r['setup_us']:.1f} | {r['submit_us']:.1f} | {r['wait_us']:.1f} "
                   f"| {r['finish_us']:.1f} | {share:.1%} | {r['failed']} |")
    return out


def latency_table(data):
    rows = data["latency"]
    if not rows:
        return []
    out = ["", "First-folio latency: from mm_migrate_batch_start to the batch's first",
           "mm_migrate_folio_remapped (median and max over batches), 64 MiB per move, migrator kernel:", "",
           "| folio | max_batch_pages | batches | first folio ms (median) | max | GB/s |",
           "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["folio_kb"], r["max_batch_pages"])):
        out.append(f"| {folio_label(r['folio_kb'])} | {r['max_batch_pages']} | {r['batches']} "
                   f"| {r['first_ms_median']:.3f} | {r['first_ms_max']:.3f} | {r['gbps']:.3f} |")
    return out


def fmt_run(r):
    if not r:
        return "-"
    return f"{r['gbps']:.3f} [{r['gbps_min']:.3f}-{r['gbps_max']:.3f}]"


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = data["runs"]
    keys = []
    for r in runs:
        if config_key(r) not in keys:
            keys.append(config_key(r))
    sizes = [kb for kb in FOLIO_KB if any(r["folio_kb"] == kb for r in runs)]
    width = 0.8 / max(len(keys), 1)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for i, k in enumerate(keys):
        xs, ys, lo, hi = [], [], [], []
        for j, kb in enumerate(sizes):
            r = next((x for x in runs if config_key(x) == k and x["folio_kb"] == kb), None)
            if r:
                xs.append(j + (i - (len(keys) - 1) / 2) * width)
                ys.append(r["gbps"])
                lo.append(r["gbps"] - r["gbps_min"])
                hi.append(r["gbps_max"] - r["gbps"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=config_name(k))
    for m in data["memcpy"]:
        if m["kernel"] == "vanilla" and m["dst_offset"]:
            ax.axhline(m["gbps"], linestyle="--", linewidth=0.8, color="grey")
            ax.annotate(f"memcpy x{m['threads']}", (len(sizes) - 0.5, m["gbps"]),
                        fontsize=7, ha="right", va="bottom", color="grey")
    ax.set_xticks(range(len(sizes)), [folio_label(kb) for kb in sizes])
    ax.set_xlabel("folio size")
    ax.set_ylabel("GB/s (median, min-max)")
    ax.set_title("move_pages() throughput, node0 -> node1 (QEMU TCG: compare ratios)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--out", required=True, help="path prefix, e.g. results/bench")
    args = ap.parse_args()
    data = build(read_lines(args.inputs))
    if not data["runs"]:
        sys.exit("no benchmark results found")
    with open(args.out + ".json", "w") as f:
        json.dump(data, f, indent=1)
    md = table(data)
    with open(args.out + ".md", "w") as f:
        f.write(md)
    plot(data, args.out + ".png")
    print(md)
    print(f"wrote {args.out}.json, {args.out}.md, {args.out}.png")


if __name__ == "__main__":
    main()
