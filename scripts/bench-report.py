#!/usr/bin/env python3
"""Turn the JSON lines of make bench (scripts/bench.sh: an environment file
and one output per boot of guest/bench.sh) into results/bench.json (schema:
docs/benchmark.md, "bench.json"), bench.md (also printed) and one plot per experiment,
bench-<experiment>.png.

Comparisons are paired. Between kernels, the unit is a pair of consecutive
boots (vanilla, patched): each boot's mean, their ratio, a t interval over
the boot pairs, so that drift between boots cancels instead of deciding.
Within a boot (an offloader against the kernel migrator), the unit is a
pair of reps run one after the other. Ratios are geometric means with 95%
confidence intervals; an interval that contains 1 is reported as no
significant difference. Nothing is printed for what was not measured.

Under QEMU icount (GUEST_ACCEL=icount) the guest clock counts instructions:
the report then gives instructions per migrated page, the spread of each
setting across boots, and says what that mode cannot measure."""
import argparse
import json
import math
import statistics
import sys
from collections import defaultdict

# Two-sided 95% Student t quantiles by degrees of freedom (1.96 beyond).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
       2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
TOLERANCE = 0.03	# "within 3% of vanilla"
ICOUNT = ("Under QEMU icount (`-icount shift=0,sleep=off`) the guest's clock counts instructions: QEMU's manual "
          "says that \"the virtual cpu will execute one instruction every 2^N ns of virtual time\" (QEMU 7.2 "
          "icount_to_ns(): icount << shift), so with shift=0 one guest nanosecond is one instruction. One host "
          "thread runs every vCPU in turn (`thread=single`) and they share the counter: a guest nanosecond is an "
          "instruction executed by any vCPU. The guest's TSC (rdtsc reads icount_get()) and timers run on that "
          "clock, so the times migbench measures (CLOCK_MONOTONIC around move_pages()) are instruction counts: "
          "instructions per migrated 4K page = move_s x 10^9 / (MiB x 256). While every vCPU idles, the clock "
          "jumps to the next timer (sleep=off): time without instructions. A rep-prefixed string instruction "
          "counts once per iteration (under icount QEMU runs one iteration per pass; a `rep movsq` copy of a 4K "
          "page counts 512). GB/s below is GB per 10^9 instructions, µs are thousands of instructions.")
ICOUNT_LIMITS = ("What this mode does not measure: memory bandwidth and latency, caches and TLBs (an instruction "
                 "counts the same whatever memory it touches, so a copy costs its instruction count, not the trip "
                 "of its bytes; the memcpy bound is not shown), parallel speed-up (one host thread runs every vCPU "
                 "and the clock adds their instructions: work spread over mtcopy's threads or swdma's channels "
                 "costs the sum of their instructions, never less time, so mtcopy and dcbm against the kernel "
                 "migrator are ratios of total instructions, and the thread and channel sweep is not shown), and "
                 "the cost of an instruction (not cycle accurate: on hardware instructions differ in cycles).")
EXPERIMENTS = {
    "sizes": "Throughput per folio size",
    "count": "Folio-count sweep: move_pages() time per call",
    "threads": "Thread and channel sweep",
    "latency": "Latency against batch size",
    "pipeline": "Pipelined migration: throughput per folio size",
    "busy": "A busy system: migration time and co-runners' work",
}


def folio_label(kb):
    return f"{kb // 1024}M" if kb >= 1024 else f"{kb}K"


def setting(o):
    """Name of what was measured: a kernel and a migrator setting."""
    if o["kernel"] == "vanilla":
        return "vanilla"
    m, n = o["migrator"], o["threads"]
    name = {"none": "default", "kernel": "kernel"}.get(m, f"{m} x{n}" if m == "mtcopy" else f"{m} {n}ch")
    if not o.get("chunk_pages"):
        return name
    return name + f" chunk {o['chunk_pages']}" + (f" {in_flight(o)} in flight" if in_flight(o) > 1 else "")


def in_flight(o):
    """chunks_in_flight of a pipelined record (1, the default, if it has none)."""
    return o.get("chunks_in_flight") or 1


def order(e):
    """Sort key of results: folio size, then vanilla, default, kernel,
    mtcopy, dcbm by threads, then batch size."""
    rank = 0 if e["kernel"] == "vanilla" else 1 + ["none", "kernel", "mtcopy", "dcbm"].index(e["migrator"])
    return (e["folio_kb"], e.get("folios_per_call") or 0, rank, e["threads"], e.get("batch_pages") or 0,
            e.get("chunk_pages") or 0, in_flight(e))


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


# ---- statistics -------------------------------------------------------------

def summary(values):
    """n, mean, sd, median, min, max of a list (None if empty)."""
    if not values:
        return None
    return {"n": len(values), "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "median": statistics.median(values), "min": min(values), "max": max(values)}


def paired_ratio(pairs):
    """Geometric mean of a/b over (a, b) pairs with a 95% t interval."""
    logs = [math.log(a / b) for a, b in pairs if a > 0 and b > 0]
    if not logs:
        return None
    n, m = len(logs), statistics.fmean(logs)
    r = {"pairs": n, "ratio": math.exp(m), "ci_low": None, "ci_high": None, "significant": None}
    if n > 1:
        half = (T95[n - 2] if n - 2 < len(T95) else 1.96) * statistics.stdev(logs) / math.sqrt(n)
        r.update(ci_low=math.exp(m - half), ci_high=math.exp(m + half))
        r["significant"] = not r["ci_low"] <= 1 <= r["ci_high"]
    return r


def no_worse(r, tolerance, cost=False):
    """The busy experiment's goal: within tolerance of the reference, or
    better. r: a ratio of speeds (above 1 is better), or with cost=True of
    times (below 1 is better). Decided when the whole interval is on one
    side of the limit."""
    if not r or r["ci_low"] is None:
        return "too few pairs for an interval"
    lo, hi = r["ci_low"], r["ci_high"]
    if (hi <= 1 + tolerance) if cost else (lo >= 1 - tolerance):
        return f"meets (within {tolerance:.0%} or better)"
    if (lo > 1 + tolerance) if cost else (hi < 1 - tolerance):
        return f"misses (worse by more than {tolerance:.0%})"
    return "undecided"


def verdict(r, tolerance=None, cost=False):
    """r: a ratio of speeds (above 1 is faster), or with cost=True of times
    or instructions (below 1 is faster)."""
    if not r or r["ci_low"] is None:
        return "too few pairs for an interval"
    if tolerance and 1 - tolerance <= r["ci_low"] and r["ci_high"] <= 1 + tolerance:
        return f"within {tolerance:.0%}"
    if not r["significant"]:
        return "no significant difference" + (f", but the interval exceeds ±{tolerance:.0%}" if tolerance else "")
    return "faster" if (r["ratio"] < 1 if cost else r["ratio"] > 1) else "slower"


def fmt_spread(e):
    """Range of a setting's boot means over their mean, in percent."""
    sp = e and e.get("boot_spread")
    return f"{100 * sp['spread']:.2f}% ({sp['boots']} boots)" if sp else "-"


def fmt_ratio(r):
    if not r:
        return "-"
    if r["ci_low"] is None:
        return f"{r['ratio']:.3f} (n={r['pairs']})"
    return f"{r['ratio']:.3f} [{r['ci_low']:.3f}-{r['ci_high']:.3f}] n={r['pairs']}"


def fmt_summary(s, digits=3):
    if not s:
        return "-"
    return f"{s['mean']:.{digits}f} ± {s['sd']:.{digits}f}"


def fmt_range(s, digits=3):
    if not s:
        return "-"
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}-{s['max']:.{digits}f}]"


# ---- grouping and pairing ---------------------------------------------------

def group(rows, *keys):
    out = defaultdict(list)
    for r in rows:
        out[tuple(r.get(k) for k in keys)].append(r)
    return out


def boot_means(rows, value):
    """Mean of value(row) in each boot: {boot: mean}."""
    return {b: statistics.fmean(value(r) for r in rs) for (b,), rs in group(rows, "boot").items()}


def kernel_pairs(patched_rows, vanilla_rows, value):
    """Boot-paired (patched, vanilla) means of value(row): boot b of each."""
    p, v = boot_means(patched_rows, value), boot_means(vanilla_rows, value)
    return [(p[b], v[b]) for b in sorted(p) if b in v]


def boot_spread(rows, value):
    """How far one setting moves from boot to boot: the boot means of
    value(row) and their range (max - min) over their mean."""
    m = boot_means(rows, value)
    if len(m) < 2:
        return None
    means = [m[b] for b in sorted(m)]
    return {"boots": len(means), "means": means,
            "spread": (max(means) - min(means)) / statistics.fmean(means)}


def rep_pairs(rows, ref_rows, value):
    """Rep-paired (row, reference) values within boots: same boot and rep index."""
    ref = {(r["boot"], r["i"]): value(r) for r in ref_rows}
    return [(value(r), ref[(r["boot"], r["i"])]) for r in rows if (r["boot"], r["i"]) in ref]


def gbps(r):
    return r["gbps"]


def ns_per_page(r):
    """Guest nanoseconds in move_pages() per migrated 4K page; under icount
    (shift=0) the instructions every vCPU executed meanwhile."""
    return r["move_s"] * 1e9 / (r["total_mb"] * 256)


# ---- analysis ---------------------------------------------------------------

def analyse(objs):
    kinds = group(objs, "type")
    reps = kinds.get(("rep",), [])
    data = {"schema": 2, "env": {}, "boots": [], "reps": reps,
            "copy": kinds.get(("copy",), []), "dcbm_overhead": kinds.get(("dcbm_overhead",), []),
            "stats": kinds.get(("stats",), []), "tlb": kinds.get(("tlb",), []),
            "inaccessible": kinds.get(("inaccessible",), []), "memcpy": kinds.get(("memcpy",), []),
            "errors": kinds.get(("error",), []), "results": {}}
    for o in kinds.get(("host",), []):
        data["env"] = o
    data["boots"] = kinds.get(("boot",), [])
    res = data["results"]
    by_exp = group(reps, "exp")

    # sizes: every setting against vanilla (boot pairs) and the offloaders
    # against the kernel migrator (rep pairs); CPU time per GB
    rows = by_exp.get(("sizes",), [])
    copy = {(c["boot"], c["i"], c["folio_kb"]): c["copy_s"] for c in data["copy"] if c["exp"] == "sizes"}
    res["sizes"] = []
    for (kb,), rs in sorted(group(rows, "folio_kb").items()):
        by_set = group(rs, "kernel", "migrator", "threads")
        vanilla = by_set.get(("vanilla", "none", 1), [])
        kernel = by_set.get(("patched", "kernel", 1), [])
        for key, srs in by_set.items():
            gb = srs[0]["total_mb"] / 1024
            e = {"folio_kb": kb, "setting": setting(srs[0]), "kernel": key[0], "migrator": key[1],
                 "threads": key[2], "gbps": summary([gbps(r) for r in srs]),
                 "cpu_s_per_gb": {k: statistics.fmean(r[k + "_s"] for r in srs) / gb
                                  for k in ("utime", "stime", "helpers", "engine")},
                 "wall_s_per_gb": statistics.fmean(r["move_s"] for r in srs) / gb,
                 "ns_per_page": summary([ns_per_page(r) for r in srs]),
                 "boot_spread": boot_spread(srs, ns_per_page)}
            if key[0] == "patched":
                e["vs_vanilla"] = paired_ratio(kernel_pairs(srs, vanilla, gbps))
                # ratio of costs: below 1 is cheaper than vanilla
                e["ns_per_page_vs_vanilla"] = paired_ratio(kernel_pairs(srs, vanilla, ns_per_page))
            if key[1] not in ("none", "kernel"):
                e["vs_kernel"] = paired_ratio(rep_pairs(srs, kernel, gbps))
            if key[1] == "kernel":
                f = [copy[(r["boot"], r["i"], kb)] / r["move_s"] for r in srs
                     if (r["boot"], r["i"], kb) in copy and r["move_s"]]
                e["copy_fraction"] = summary(f)
            res["sizes"].append(e)

    # latency: each rep joined with the summary of its trace
    key = ("kernel", "boot", "migrator", "threads", "i", "batch_pages", "chunk_pages", "folio_kb", "touchers")
    trace = {tuple(o.get(k) for k in key): o for o in data["inaccessible"]}
    joined = [{**r, **trace.get(tuple(r.get(k) for k in key), {})} for r in by_exp.get(("latency",), [])]
    lat_tlb = {tuple(o.get(k) for k in key): o["ipis"] for o in data["tlb"] if o["exp"] == "latency"}
    res["latency"] = []
    vanilla_lat = {k: rs for k, rs in group([j for j in joined if j["kernel"] == "vanilla"],
                                            "folio_kb", "touchers").items()}
    for (kb, tch, kern, m, t, bp, cp), js in sorted(group(joined, "folio_kb", "touchers", "kernel", "migrator",
                                                          "threads", "batch_pages", "chunk_pages").items(),
                                                    key=lambda x: str(x[0])):
        e = {"folio_kb": kb, "setting": setting(js[0]), "kernel": kern, "migrator": m, "threads": t,
             "batch_pages": bp, "chunk_pages": cp or 0, "touchers": tch or 0, "reps": len(js),
             "first_ms": summary([j["first_ms_median"] for j in js if "first_ms_median" in j]),
             "inaccessible_ms_median": summary([j["inacc_ms_median"] for j in js if "inacc_ms_median" in j]),
             "inaccessible_ms_p99": summary([j["inacc_ms_p99"] for j in js if "inacc_ms_p99" in j]),
             "inaccessible_ms_max": summary([j["inacc_ms_max"] for j in js if "inacc_ms_max" in j]),
             "gbps": summary([gbps(j) for j in js]),
             "tlb_ipis_per_gib": summary([lat_tlb[tuple(j.get(k) for k in key)] / (j["total_mb"] / 1024)
                                          for j in js if tuple(j.get(k) for k in key) in lat_tlb])}
        vl = vanilla_lat.get((kb, tch), [])
        if kern == "patched" and m == "none" and not tch and vl:
            e["first_vs_vanilla"] = paired_ratio(kernel_pairs(
                [j for j in js if "first_ms_median" in j],
                [j for j in vl if "first_ms_median" in j], lambda j: j["first_ms_median"]))
        vp99 = summary([j["inacc_ms_p99"] for j in vl if "inacc_ms_p99" in j])
        if vp99 and e["inaccessible_ms_max"]:
            e["max_vs_vanilla_p99"] = e["inaccessible_ms_max"]["mean"] / vp99["mean"]
        res["latency"].append(e)

    # pipeline: every setting against vanilla (boot pairs), with the bounds
    # of an engine N times the CPU's copy speed, from the kernel migrator's F
    # at the same batch size; vanilla's batch is 512 pages
    rows = by_exp.get(("pipeline",), [])
    res["pipeline"] = []
    copy = {(c["boot"], c["i"], c["folio_kb"], batch_pages(c)): c["copy_s"] for c in data["copy"]
            if c["exp"] == "pipeline"}
    ovh = {overhead_key(o): o for o in data["dcbm_overhead"] if o["exp"] == "pipeline"}
    busy = {overhead_key(o): o for o in data["stats"] if o["exp"] == "pipeline"}
    tlb = {overhead_key(o): o for o in data["tlb"] if o["exp"] == "pipeline"}
    ipis = lambda srs: summary([tlb[overhead_key(r)]["ipis"] / (r["total_mb"] / 1024) for r in srs
                                if overhead_key(r) in tlb and r["total_mb"]])
    for (kb,), rs in sorted(group(rows, "folio_kb").items()):
        vanilla = [r for r in rs if r["kernel"] == "vanilla"]
        for bp, brs in sorted(group([r for r in rs if r["kernel"] == "patched"], "batch_pages").items(),
                              key=lambda x: x[0][0] or 512):
            bp = bp[0] or 512
            by_set = group(brs, "kernel", "migrator", "threads", "chunk_pages", "chunks_in_flight")
            kernel = by_set.get(("patched", "kernel", 1, 0, None), [])
            kcopy = {(b, i): v for (b, i, k, p), v in copy.items() if k == kb and p == bp}
            f = summary([kcopy[(r["boot"], r["i"])] / r["move_s"] for r in kernel
                         if (r["boot"], r["i"]) in kcopy and r["move_s"]])
            engine = pipeline_engine(kernel, kcopy, by_set, ovh)
            if not res["pipeline"] or res["pipeline"][-1]["folio_kb"] != kb:
                res["pipeline"].append({"folio_kb": kb, "setting": "vanilla", "kernel": "vanilla",
                                        "migrator": "none", "threads": 1, "chunk_pages": 0,
                                        "batch_pages": 512, "gbps": summary([gbps(r) for r in vanilla]),
                                        "tlb_ipis_per_gib": ipis(vanilla)})
            for key, srs in by_set.items():
                e = {"folio_kb": kb, "setting": setting(srs[0]), "kernel": key[0], "migrator": key[1],
                     "threads": key[2], "chunk_pages": key[3] or 0, "chunks_in_flight": key[4] or 1,
                     "batch_pages": bp, "gbps": summary([gbps(r) for r in srs]),
                     "vs_vanilla": paired_ratio(kernel_pairs(srs, vanilla, gbps)),
                     "tlb_ipis_per_gib": ipis(srs)}
                if key[1] == "kernel" and not key[3]:
                    e["copy_fraction"] = f
                if key[1] not in ("none", "kernel") and f:
                    e["amdahl_bound"] = amdahl(f["mean"], key[2])
                    e["overlap_bound"] = overlap_bound(f["mean"], key[2])
                if key[1] == "dcbm":
                    e.update(dcbm_phases(srs, ovh))
                b = [busy[overhead_key(r)] for r in srs if overhead_key(r) in busy]
                if b:
                    e["busy_share"] = summary([o["busy"] / (o["busy"] + o["folios"])
                                               for o in b if o["busy"] + o["folios"]])
                if key[1] == "dcbm" and f and key[2] in engine:
                    speed, cost = engine[key[2]]
                    e["engine_speed"], e["engine_cpu_cost"] = speed, cost
                    e["measured_bound"] = engine_bound(f["mean"], speed["mean"], cost["mean"], key[3])
                res["pipeline"].append(e)

    # busy: per folio size and load (idle or the co-runners' nice), every
    # setting's migration time and co-runners' work rate against vanilla
    # (boot pairs) and against the patched default (rep pairs in its boots)
    res["busy"] = []
    cpus = {(b["kernel"], b["boot"]): b["cpus"] for b in data["boots"]}
    move_s = lambda r: r["move_s"]
    rate = lambda r: r["corun_ops"] / r["corun_window_s"]
    for (kb, load), rs in sorted(group(by_exp.get(("busy",), []), "folio_kb", "load").items(),
                                 key=lambda x: (x[0][0], x[0][1] != "idle", x[0][1])):
        by_set = group(rs, "kernel", "migrator", "threads")
        vanilla = by_set.get(("vanilla", "none", 1), [])
        default = by_set.get(("patched", "none", 1), [])
        busy_rows = lambda xs: [r for r in xs if r.get("corun_window_s")]
        for key, srs in by_set.items():
            gb = srs[0]["total_mb"] / 1024
            e = {"folio_kb": kb, "load": load, "setting": setting(srs[0]).split(" chunk")[0],
                 "kernel": key[0], "migrator": key[1], "threads": key[2],
                 "chunk_pages": srs[0].get("chunk_pages") or 0,
                 "move_s": summary([move_s(r) for r in srs]),
                 "cpu_s_per_gb": {k: statistics.fmean(r.get(k + "_s", 0) for r in srs) / gb
                                  for k in ("utime", "stime", "helpers", "engine")}}
            if busy_rows(srs):
                e["corun_rate"] = summary([rate(r) for r in busy_rows(srs)])
                share = lambda r, t: t / (r["corun_window_s"] * cpus[(r["kernel"], r["boot"])])
                known = [r for r in busy_rows(srs) if (r["kernel"], r["boot"]) in cpus]
                e["corun_cpu_share"] = summary([share(r, r["corun_s"]) for r in known])
                e["task_cpu_share"] = summary([share(r, r.get("utime_s", 0) + r.get("stime_s", 0)) for r in known])
                e["engine_cpu_share"] = summary([share(r, r.get("engine_s", 0)) for r in known])
            if key[1] == "dcbm":
                bk = lambda o: (o["boot"], o["i"], o["folio_kb"], o.get("load"), o["threads"])
                ovh = {bk(o): o for o in data["dcbm_overhead"] if o["exp"] == "busy"}
                e.update(dcbm_phases(srs, {overhead_key(r): ovh[bk(r)] for r in srs if bk(r) in ovh}))
            if key[0] == "patched":
                e["time_vs_vanilla"] = paired_ratio(kernel_pairs(srs, vanilla, move_s))
                if busy_rows(srs):
                    e["corun_vs_vanilla"] = paired_ratio(kernel_pairs(busy_rows(srs), busy_rows(vanilla), rate))
                if key[1] != "none":
                    e["time_vs_default"] = paired_ratio(rep_pairs(srs, default, move_s))
                    if busy_rows(srs):
                        e["corun_vs_default"] = paired_ratio(rep_pairs(busy_rows(srs), busy_rows(default), rate))
            res["busy"].append(e)

    # count: time per call
    res["count"] = []
    for (kb, c), rs in sorted(group(by_exp.get(("count",), []), "folio_kb", "folios_per_call").items()):
        by_set = group(rs, "kernel", "migrator", "threads")
        vanilla = by_set.get(("vanilla", "none", 1), [])
        for key, srs in by_set.items():
            us = lambda r: r["move_s"] / r["calls"] * 1e6
            e = {"folio_kb": kb, "folios_per_call": c, "setting": setting(srs[0]), "kernel": key[0],
                 "migrator": key[1], "threads": key[2], "us_per_call": summary([us(r) for r in srs])}
            if key[0] == "patched":
                # ratio of times per call: below 1 is faster than vanilla
                e["time_vs_vanilla"] = paired_ratio(kernel_pairs(srs, vanilla, us))
            res["count"].append(e)

    # threads: each setting against the kernel migrator, rep-paired
    res["threads"] = []
    for (kb,), rs in sorted(group(by_exp.get(("threads",), []), "folio_kb").items()):
        by_set = group(rs, "migrator", "threads")
        kernel = by_set.get(("kernel", 1), [])
        f = next((s["copy_fraction"] for s in res["sizes"]
                  if s["folio_kb"] == kb and s["migrator"] == "kernel" and s.get("copy_fraction")), None)
        for (m, t), srs in sorted(by_set.items()):
            e = {"folio_kb": kb, "setting": setting(srs[0]), "kernel": "patched", "migrator": m,
                 "threads": t, "gbps": summary([gbps(r) for r in srs])}
            if m != "kernel":
                e["vs_kernel"] = paired_ratio(rep_pairs(srs, kernel, gbps))
                if f:
                    e["amdahl_bound"] = amdahl(f["mean"], t)
            res["threads"].append(e)
    for name, rs in res.items():
        if name != "busy":	# in its own order: size, load, setting
            rs.sort(key=order)
    res["busy"].sort(key=lambda e: (e["folio_kb"], e["load"] != "idle", e["load"], order(e)))
    data["boots"].sort(key=lambda b: (b["boot"], b["kernel"] == "patched"))
    return data


def amdahl(f, n):
    return 1 / ((1 - f) + f / n)


def overlap_bound(f, n):
    """The bound when the copy overlaps the rest: the slower stage sets the pace."""
    return 1 / max(1 - f, f / n)


def engine_bound(f, speed, cost, overlapped):
    """The bounds for an engine of the measured speed (times the CPU's copy)
    whose batches also cost the migrating CPU cost times the CPU copy's time
    (dcbm's mapping, descriptors and completion): the CPU's stage is then
    (1-F) + F*cost, the engine's F/speed."""
    cpu, eng = (1 - f) + f * cost, f / speed
    return 1 / max(cpu, eng) if overlapped else 1 / (cpu + eng)


def batch_pages(o):
    """max_batch_pages of a pipeline record (512, vanilla's, if it has none)."""
    return o.get("batch_pages", 512)


def overhead_key(o):
    """The rep a dcbm_overhead or stats record belongs to, or the key of a rep."""
    return (o["boot"], o["i"], o["folio_kb"], batch_pages(o), o.get("chunk_pages") or 0, in_flight(o),
            o["migrator"], o["threads"])


def dcbm_phases(reps, ovh):
    """Where dcbm's batches of these reps spent the migrating task's time:
    the share of move_pages() it fed the engine or waited for it
    (submission, which waits when a ring is full, and the wait), and the
    share it spent in dcbm's setup and completion. ovh: the dcbm_overhead
    records by overhead_key()."""
    wait, work = [], []
    for r in reps:
        o = ovh.get(overhead_key(r))
        if not o or not r["move_s"]:
            continue
        wait.append(o["batches"] * (o["submit_us"] + o["wait_us"]) / 1e6 / r["move_s"])
        work.append(o["batches"] * (o["setup_us"] + o["finish_us"]) / 1e6 / r["move_s"])
    return {"wait_share": summary(wait), "dcbm_cpu_share": summary(work)} if wait else {}


def pipeline_engine(kernel, kcopy, by_set, ovh):
    """dcbm's engine, from its unpipelined reps (by_set: one folio and batch
    size): speed, in times the CPU's copy (the kernel migrator's batch copy
    of the same rep index and boot, kcopy), and the CPU time of its setup and
    completion per byte, in CPU copy times. By channel count."""
    cpu = {(r["boot"], r["i"]): kcopy[(r["boot"], r["i"])] * 1e9 / (r["total_mb"] * 2 ** 20)
           for r in kernel if (r["boot"], r["i"]) in kcopy}
    out = {}
    for (_, m, n, c, _), rs in by_set.items():
        if m != "dcbm" or c:
            continue
        speed, cost = [], []
        for r in rs:
            o, c_ns = ovh.get(overhead_key(r)), cpu.get((r["boot"], r["i"]))
            if not o or not o.get("bytes") or not c_ns:
                continue
            speed.append(c_ns / ((o["submit_us"] + o["wait_us"]) * 1e3 / o["bytes"]))
            cost.append((o["setup_us"] + o["finish_us"]) * 1e3 / o["bytes"] / c_ns)
        if speed:
            out[n] = (summary(speed), summary(cost))
    return out


# ---- report -----------------------------------------------------------------

def table(head, rows):
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
           ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def env_section(data):
    env, boots = data["env"], data["boots"]
    out = ["# make bench", ""]
    if env:
        flags = env.get("guest_cpu_flags")
        out += [f"- Accelerator: {env.get('accel', '?')}; QEMU: {env.get('qemu', '-')}"
                + (f"; guest CPU: -cpu max{flags}" if flags else ""),
                f"- Host: {env.get('host_cpus', '?')} CPUs ({env.get('host_cpu_model', '?')}), "
                f"{env.get('host_nodes', '?')} NUMA node(s)"
                + (f"; load average (1 min) at the start: {env['host_load']}" if env.get("host_load") else ""),
                f"- Guest: {env.get('guest_cpus', '?')} vCPUs (nodes 0 and 1 half each, node 2 memory only), "
                f"node memory {env.get('guest_node_mb', '?')} MiB",
                f"- Settings: {env.get('settings', '')}"]
    if env.get("commit"):
        out += [f"- Testbed commit (series and scripts): {env['commit']}"]
    kernels = sorted({(b["kernel"], b["uname"]) for b in boots})
    out += [f"- Kernels: " + ", ".join(f"{k} {u}" for k, u in kernels)]
    order = " ".join(f"{b['kernel'][0]}{b['boot']}" for b in boots)
    out += [f"- Boots, in order: {order} ({len(boots)}; v = vanilla, p = patched)"]
    if env.get("failed"):
        out += [f"- **Failed boots** (their partial data is included): {', '.join(env['failed'])}"]
    if data["errors"]:
        out += [f"- **{len(data['errors'])} measurements failed** (bench.json, \"errors\"): "
                + "; ".join(f"{e['kernel']} boot {e['boot']} {e['exp']} {e['args']}: {e['msg']}"
                            for e in data["errors"][:5])]
    if env.get("guest_cpus") and env.get("host_cpus") and env.get("accel") == "tcg":
        out += [f"- QEMU TCG runs the {env['guest_cpus']} vCPUs on {env['host_cpus']} host CPUs, shared with "
                "QEMU's own threads: more copy threads or swdma channels than that cannot add bandwidth."]
    out += ["", "Every move is verified (bytes, page nodes, folio size). Figures: mean ± sd over the reps, "
            "median [min-max]. Ratios: geometric mean of paired ratios [95% confidence interval] n=pairs; "
            "between kernels a pair is two consecutive boots (their means), within a boot two consecutive "
            "reps." + ("" if env.get("accel") == "icount" else
                       " Under QEMU TCG absolute GB/s mean little, 2M copies depend on the emulator's TLB state "
                       "(docs/benchmark.md), and swdma copies with the CPU: compare ratios.")]
    if env.get("accel") == "icount":
        out += ["", ICOUNT, "", ICOUNT_LIMITS]
    return out


def default_section(data):
    """The default against vanilla: throughput, or under icount instructions per page."""
    icount = data["env"].get("accel") == "icount"
    rows, lat_rows = [], []
    for s in data["results"]["sizes"]:
        if s["migrator"] == "none" and s["kernel"] == "patched":
            v = next((x for x in data["results"]["sizes"]
                      if x["folio_kb"] == s["folio_kb"] and x["kernel"] == "vanilla"), None)
            if icount:
                r = s.get("ns_per_page_vs_vanilla")
                cells = [fmt_range(v and v["ns_per_page"], 0), fmt_range(s["ns_per_page"], 0)]
            else:
                r = s.get("vs_vanilla")
                cells = [fmt_range(v and v["gbps"]), fmt_range(s["gbps"])]
            rows.append([folio_label(s["folio_kb"]), *cells, fmt_ratio(r), fmt_spread(v), fmt_spread(s),
                         verdict(r, TOLERANCE, cost=icount)])
    for e in data["results"]["latency"]:
        if "first_vs_vanilla" in e:
            v = next((x for x in data["results"]["latency"] if x["kernel"] == "vanilla"
                      and x["folio_kb"] == e["folio_kb"] and not x.get("touchers")), None)
            r = e["first_vs_vanilla"]
            lat_rows.append([folio_label(e["folio_kb"]), fmt_range(v and v["first_ms"]),
                             fmt_range(e["first_ms"]), fmt_ratio(r), verdict(r, TOLERANCE, cost=True)])
    if not rows and not lat_rows:
        return []
    out = ["", "## The patched kernel at its defaults against vanilla", "",
           "No migrator selected: the batch path is patched out. The claim to test: within 3% of vanilla. " +
           ("Instructions per migrated 4K page (sizes experiment), median [min-max] over the reps; the ratio of "
            "instructions, below 1 is fewer; " if icount else "Throughput in GB/s (sizes experiment); ") +
           "\"within 3%\" means the whole interval is. Spread across boots: the range of a setting's boot "
           "means of its time per page over their mean.", ""]
    unit = "instructions / page" if icount else "GB/s"
    out += table(["folio", f"vanilla {unit}", f"default {unit}", "default / vanilla",
                  "vanilla spread across boots", "default spread across boots", "verdict"], rows)
    if lat_rows:
        out += ["", "First-folio latency in ms (mm_migrate_pages_start to the first remove_migration_pte/pmd, "
                "tracepoints vanilla has; batches of 512 pages); ratio of times, below 1 is faster:", ""]
        out += table(["folio", "vanilla ms", "default ms", "default / vanilla", "verdict"], lat_rows)
    return out


def instructions_section(data):
    """Under icount: instructions per migrated 4K page of vanilla, the default
    and the kernel migrator, and how far each setting moved from boot to boot."""
    rs = data["results"]["sizes"]
    if data["env"].get("accel") != "icount" or not rs:
        return []
    rows = []
    for (kb,), es in group(rs, "folio_kb").items():
        cell = {e["setting"]: e for e in es}
        v, d, k = (cell.get(n) for n in ("vanilla", "default", "kernel"))
        rows.append([folio_label(kb), *(fmt_range(e and e["ns_per_page"], 0) for e in (v, d, k)),
                     *(fmt_ratio(e and e.get("ns_per_page_vs_vanilla")) for e in (d, k))])
    out = ["", "## Instructions per migrated 4K page", "",
           "move_pages() of the whole region in one call, node 0 to node 1 (sizes experiment): instructions "
           "executed by all vCPUs during the call per 4K page moved, median [min-max] over the reps; ratios of "
           "instructions to vanilla's, paired boot by boot (below 1: fewer).", ""]
    out += table(["folio", "vanilla", "default", "kernel migrator", "default / vanilla", "kernel / vanilla"], rows)
    spreads = [e for e in rs if e.get("boot_spread")]
    if not spreads:
        return out
    worst = max(spreads, key=lambda e: e["boot_spread"]["spread"])
    base = [e for e in spreads if e["setting"] in ("vanilla", "default", "kernel")]
    out += ["", "### Determinism: the same kernel in several boots", "",
            "Each setting's mean instructions per page in each boot, in boot order, and their range over their "
            "mean; beside it the standard deviation of the reps over their mean (all boots). Largest spread "
            "across boots: " + (f"{100 * max(e['boot_spread']['spread'] for e in base):.2f}% for vanilla, the "
                                 "default and the kernel migrator; " if base else "") +
            f"{100 * worst['boot_spread']['spread']:.2f}% over all settings "
            f"({worst['setting']}, {folio_label(worst['folio_kb'])}).", ""]
    out += table(["folio", "setting", "reps", "boot means", "spread across boots", "sd of reps / mean"],
                 [[folio_label(e["folio_kb"]), e["setting"], e["ns_per_page"]["n"],
                   " / ".join(f"{m:.0f}" for m in e["boot_spread"]["means"]), fmt_spread(e),
                   f"{100 * e['ns_per_page']['sd'] / e['ns_per_page']['mean']:.2f}%"] for e in spreads])
    return out


def sizes_section(data):
    rs = data["results"]["sizes"]
    if not rs:
        return []
    rows = []
    for s in rs:
        ref = s.get("vs_kernel") or s.get("vs_vanilla")
        rows.append([folio_label(s["folio_kb"]), s["setting"], s["gbps"]["n"], fmt_summary(s["gbps"]),
                     fmt_range(s["gbps"]), fmt_ratio(ref),
                     "kernel" if "vs_kernel" in s else ("vanilla" if "vs_vanilla" in s else "")])
    out = ["", "## " + EXPERIMENTS["sizes"], "",
           "move_pages() of the whole region in one call, node 0 to node 1. Offloaders are paired with the "
           "kernel migrator (rep by rep), the patched kernel's settings with vanilla (boot by boot).", ""]
    out += table(["folio", "setting", "n", "GB/s mean ± sd", "median [min-max]", "ratio [95% CI]", "against"],
                 rows)
    fr = [s for s in rs if s.get("copy_fraction")]
    icount = data["env"].get("accel") == "icount"
    if fr and icount:
        out += ["", "Copy fraction F of the kernel migrator's instructions in move_pages() (batch-copy "
                "tracepoints); no Amdahl bound: a copy's instructions say nothing of its time on hardware.", ""]
        out += table(["folio", "F mean ± sd"], [[folio_label(s["folio_kb"]), fmt_summary(s["copy_fraction"])]
                                               for s in fr])
    elif fr:
        out += ["", "Copy fraction F of the kernel migrator's move_pages() time (batch-copy tracepoints) and "
                "the Amdahl bound 1/((1-F)+F/N) on a copy N times faster:", ""]
        out += table(["folio", "F mean ± sd", "bound N=2", "bound N=4", "bound N=16"],
                     [[folio_label(s["folio_kb"]), fmt_summary(s["copy_fraction"]),
                       *(f"{amdahl(s['copy_fraction']['mean'], n):.2f}" for n in (2, 4, 16))] for s in fr])
    out += ["", "### CPU time per GB migrated", "",
            "The migrating process's user and system time (getrusage(RUSAGE_SELF); it has one thread while it "
            "moves; mtcopy's workers are kworkers, not charged to it: their time is under other threads), the "
            "CPU time of all other threads (kworkers, mtcopy workers), and apart the swdma channel threads: a "
            "software engine copying with the CPU, time that DMA hardware would not spend on CPUs. Thread times "
            "come in 10 ms clock ticks per thread and rep; means over the reps." +
            (" Under icount these seconds are 10^9 instructions, and a thread is also charged the other vCPU's "
             "instructions while both run (they take turns on one clock): mtcopy's and swdma's threads overlap "
             "with the migrating task." if icount else ""), ""]
    out += table(["folio", "setting", "task user s/GB", "task sys s/GB", "other threads s/GB", "swdma s/GB",
                  "wall s/GB"],
                 [[folio_label(s["folio_kb"]), s["setting"],
                   *(f"{s['cpu_s_per_gb'][k]:.3f}" for k in ("utime", "stime", "helpers", "engine")),
                   f"{s['wall_s_per_gb']:.3f}"] for s in rs])
    return out


def count_section(data):
    rs = data["results"]["count"]
    if not rs:
        return []
    sets = list(dict.fromkeys(r["setting"] for r in rs))
    rows = []
    for (kb, c), es in group(rs, "folio_kb", "folios_per_call").items():
        cell = {e["setting"]: e for e in es}
        rows.append([folio_label(kb), f"{c:g}"] + [
            fmt_summary(cell[s]["us_per_call"], 0) + (f" ({cell[s]['time_vs_vanilla']['ratio']:.2f})"
                                                       if cell[s].get("time_vs_vanilla") else "")
            if s in cell else "-" for s in sets])
    return ["", "## " + EXPERIMENTS["count"], "",
            "Microseconds per move_pages() call (mean ± sd) for N folios per call, and in brackets the paired "
            "ratio of times to vanilla (below 1: faster; intervals in bench.json). Batches below the migrator's "
            "min_batch_pages (mtcopy 64, dcbm 8 with 4K pages) stay out of the batch path and are copied in the "
            "move. 2M counts stop at the folios of BENCH_MB.",
            ""] + table(["folio", "folios/call"] + [f"{s} us" for s in sets], rows)


def threads_section(data):
    rs = data["results"]["threads"]
    if not rs:
        return []
    env = data["env"]
    if env.get("accel") == "icount":
        return ["", "## " + EXPERIMENTS["threads"], "",
                "Not shown: under icount one host thread runs every vCPU and the clock adds their instructions, "
                "so more threads or channels can never take less time; this sweep measures parallel speed-up, "
                "which this mode cannot (the reps are in bench.json)."]
    out = ["", "## " + EXPERIMENTS["threads"], "",
           f"GB/s against threads (mtcopy) and channels (dcbm on swdma), each paired rep by rep with the kernel "
           f"migrator. The guest had {env.get('guest_cpus', '?')} vCPUs on {env.get('host_cpus', '?')} host CPUs: "
           "beyond them, threads and channels only share the same CPUs.", ""]
    out += table(["folio", "setting", "GB/s mean ± sd", "median [min-max]", "/ kernel [95% CI]", "Amdahl bound"],
                 [[folio_label(e["folio_kb"]), e["setting"], fmt_summary(e["gbps"]), fmt_range(e["gbps"]),
                   fmt_ratio(e.get("vs_kernel")), f"{e['amdahl_bound']:.2f}" if "amdahl_bound" in e else "-"]
                  for e in rs])
    return out


def latency_section(data):
    rs = data["results"]["latency"]
    if not rs:
        return []
    out = ["", "## " + EXPERIMENTS["latency"], "",
           "One move_pages() call of a region as large as the largest batch, with tracepoints vanilla has: "
           "first-folio latency from mm_migrate_pages_start to the call's first remove_migration_pte/pmd; "
           "inaccessible time of each folio from its set_migration_pte/pmd to its remove_migration_pte/pmd "
           "(median, 99th percentile and maximum over the folios of a rep; means over reps). Vanilla's batch "
           "is 512 pages. Touchers: threads that keep vmsplice()ing parts of the region into pipes while it "
           "moves (migbench -R), holding page references as page-cache readers do, so that moves fail with "
           "-EAGAIN and are retried. max / vanilla p99: the maximum against vanilla's 99th percentile with "
           "as many touchers (the goal: at most 2). TLB IPIs per GiB: TLB shootdown IPIs received by all CPUs "
           "(x86 /proc/interrupts, `TLB`) during the rep, per GiB moved; the touchers are threads of the "
           "migrating process, so a flush of its mm reaches their CPUs (without them the mm runs on one CPU "
           "and its flushes are local).", ""]
    out += table(["folio", "touchers", "setting", "batch pages", "chunk", "first folio ms", "inaccessible median ms",
                  "p99 ms", "max ms", "max / vanilla p99", "GB/s", "TLB IPIs per GiB"],
                 [[folio_label(e["folio_kb"]), e.get("touchers", 0), e["setting"], e["batch_pages"],
                   e["chunk_pages"] or "", fmt_summary(e["first_ms"]),
                   fmt_summary(e["inaccessible_ms_median"]), fmt_summary(e["inaccessible_ms_p99"]),
                   fmt_summary(e["inaccessible_ms_max"]),
                   f"{e['max_vs_vanilla_p99']:.2f}" if "max_vs_vanilla_p99" in e else "",
                   fmt_summary(e["gbps"]), fmt_summary(e.get("tlb_ipis_per_gib"), 0)] for e in rs])
    return out


def pipeline_section(data):
    rs = data["results"].get("pipeline")
    if not rs:
        return []
    out = ["", "## " + EXPERIMENTS["pipeline"], "",
           "move_pages() of the whole region in one call, node 0 to node 1, in batches of `batch` pages (the "
           "patched kernel's `max_batch_pages`; vanilla's is 512); with chunk N, each batch is a pipeline of "
           "chunks of N pages (the CPU unmaps and moves chunks while the "
           "migrator copies another), without, the batch is unmapped, copied and moved whole. Ratios to "
           "vanilla are paired boot by boot. F: the copy fraction of the kernel migrator's unpipelined "
           "move_pages() time (batch-copy tracepoints). The bounds take an engine N times as fast as the "
           "CPU's copy, N the channels (swdma copies with a CPU each) or the threads (mtcopy): without "
           "overlap 1/((1-F)+F/N), with overlap 1/max(1-F, F/N).", ""]
    out += table(["folio", "setting", "batch", "GB/s mean ± sd", "/ vanilla [95% CI]", "F", "bound, no overlap",
                  "bound, overlap"],
                 [[folio_label(e["folio_kb"]), e["setting"], e["batch_pages"], fmt_summary(e["gbps"]),
                   fmt_ratio(e.get("vs_vanilla")),
                   fmt_summary(e["copy_fraction"], 2) if e.get("copy_fraction") else "",
                   f"{e['amdahl_bound']:.2f}" if "amdahl_bound" in e else "",
                   f"{e['overlap_bound']:.2f}" if "overlap_bound" in e else ""] for e in rs])
    ph = [e for e in rs if e.get("wait_share")]
    if ph:
        out += ["", "Where dcbm's batches spent the migrating task's time (`dcbm_batch`), in shares of the "
                "move_pages() call: feeding the engine or waiting for it (submission, which waits for room "
                "when a ring is full, and the wait), and in dcbm's setup and completion (mapping, "
                "descriptors, unmapping, bits). Pipelined, the engine share is what the CPU's work on other "
                "chunks did not hide.", ""]
        out += table(["folio", "setting", "batch", "/ vanilla", "engine", "dcbm"],
                     [[folio_label(e["folio_kb"]), e["setting"], e["batch_pages"], fmt_ratio(e.get("vs_vanilla")),
                       fmt_summary(e["wait_share"], 2), fmt_summary(e["dcbm_cpu_share"], 2)] for e in ph])
    busy = [e for e in rs if e.get("busy_share") and e["chunks_in_flight"] > 1]
    if busy:
        out += ["", "With more than one chunk in flight (`chunks_in_flight`), the share of the migrated folios "
                "the CPU copied in its move because the migrator was busy with another chunk "
                "(`stats/fallback_busy` over it and `stats/folios`), beside the same setting with one.", ""]
        same = lambda e: (e["folio_kb"], e["migrator"], e["threads"], e["batch_pages"], e["chunk_pages"])
        one = {same(e): e for e in rs if e.get("chunk_pages") and e["chunks_in_flight"] == 1}
        rows = []
        for e in busy:
            o = one.get(same(e))
            rows += [[folio_label(e["folio_kb"]), e["setting"], e["batch_pages"], fmt_ratio(e.get("vs_vanilla")),
                      fmt_ratio(o.get("vs_vanilla")) if o else "", fmt_summary(e["busy_share"], 2),
                      fmt_summary(o["busy_share"], 2) if o and o.get("busy_share") else ""]]
        out += table(["folio", "setting", "batch", "/ vanilla", "/ vanilla, 1 in flight", "CPU-copied (busy)",
                      "busy, 1 in flight"], rows)
    tl = [e for e in rs if e.get("tlb_ipis_per_gib")]
    if tl:
        out += ["", "TLB shootdown IPIs received by all CPUs (/proc/interrupts, `TLB`) per GiB moved: the pipeline "
                "flushes once per chunk, where vanilla flushes once per batch (x86 only: arm64 broadcasts "
                "its TLB invalidations).", ""]
        out += table(["folio", "setting", "batch", "chunk", "in flight", "TLB IPIs per GiB"],
                     [[folio_label(e["folio_kb"]), e["setting"], e["batch_pages"], e.get("chunk_pages") or "",
                       e.get("chunks_in_flight", "") if e.get("chunk_pages") else "",
                       fmt_summary(e["tlb_ipis_per_gib"], 0)] for e in tl])
    eng = [e for e in rs if "measured_bound" in e]
    if eng:
        out += ["", "dcbm's engine as measured (`dcbm_batch` tracepoint, unpipelined reps, paired with the "
                "kernel migrator's rep of the same index): its speed in times the CPU's batch copy (bytes over "
                "submission and wait, against the kernel migrator's copy time per byte), and the CPU time of "
                "its setup and completion (mapping, descriptors, unmapping, bits) in CPU copy times. The bound "
                "of that engine: the CPU's stage (1-F)+F×cost, the engine's F/speed; added without overlap, the "
                "larger of the two with it.", ""]
        out += table(["folio", "setting", "batch", "/ vanilla", "engine speed", "CPU cost", "bound, measured engine"],
                     [[folio_label(e["folio_kb"]), e["setting"], e["batch_pages"], fmt_ratio(e.get("vs_vanilla")),
                       fmt_summary(e["engine_speed"], 2), fmt_summary(e["engine_cpu_cost"], 2),
                       f"{e['measured_bound']:.2f}"] for e in eng])
    return out


def busy_section(data):
    rs = data["results"].get("busy")
    if not rs:
        return []
    icount = data["env"].get("accel") == "icount"
    out = ["", "## " + EXPERIMENTS["busy"], "",
           "One task moves the region with move_pages() (node 0 to node 1) while a CPU-bound co-runner on every "
           "CPU, pinned, at the nice given (load), counts loops of fixed work (migbench -B); idle: no co-runner; "
           "a nice followed by a (\"0a\"): none on CPU 0, where the migrating task is pinned (migbench -A). "
           "Time: move_pages() time, a ratio of times (below 1: faster). Co-runners: their loops per second of "
           "the move, all CPUs together, a ratio of rates (above 1: more work done). Against vanilla the pairs "
           "are boot pairs (each boot's mean); against the default (the patched kernel with no migrator, "
           "vanilla's path) rep pairs in the same boot, where drift cancels. Goal: within 3% of vanilla or "
           "better, decided when the whole 95% interval is on one side of the 3% limit." +
           (" Under icount one host thread runs every vCPU in turn and a guest second is 10^9 instructions of "
            "all vCPUs together: times are total work, and a co-runner's rate is its share of the "
            "instructions executed." if icount else ""), ""]
    rows = []
    for e in rs:
        rows.append([folio_label(e["folio_kb"]), e["load"], e["setting"], e["move_s"]["n"],
                     fmt_summary(e["move_s"]), fmt_ratio(e.get("time_vs_vanilla")),
                     no_worse(e.get("time_vs_vanilla"), TOLERANCE, cost=True) if e.get("time_vs_vanilla") else "",
                     fmt_ratio(e.get("time_vs_default")),
                     no_worse(e.get("time_vs_default"), TOLERANCE, cost=True) if e.get("time_vs_default") else ""])
    out += ["### Migration time", ""]
    out += table(["folio", "load", "setting", "n", "move s mean ± sd", "/ vanilla [95% CI]", "goal",
                  "/ default [95% CI]", "goal against the default"], rows)
    rows = []
    for e in rs:
        if not e.get("corun_rate"):
            continue
        rows.append([folio_label(e["folio_kb"]), e["load"], e["setting"],
                     f"{e['corun_rate']['mean'] / 1e6:.3f} ± {e['corun_rate']['sd'] / 1e6:.3f}",
                     fmt_ratio(e.get("corun_vs_vanilla")),
                     no_worse(e.get("corun_vs_vanilla"), TOLERANCE) if e.get("corun_vs_vanilla") else "",
                     fmt_ratio(e.get("corun_vs_default")),
                     no_worse(e.get("corun_vs_default"), TOLERANCE) if e.get("corun_vs_default") else ""])
    if rows:
        out += ["", "### Co-runners' work during the move", ""]
        out += table(["folio", "load", "setting", "M loops/s mean ± sd", "/ vanilla [95% CI]", "goal",
                      "/ default [95% CI]", "goal against the default"], rows)
    sh = [e for e in rs if e.get("corun_cpu_share")]
    if sh:
        out += ["", "Where the CPUs went during the move: the shares of all CPUs' time (the move's time x the "
                "CPUs) that the co-runners, the migrating process and swdma's channel threads ran (means over "
                "the reps; the co-runners' and swdma's from their CPU times in clock ticks, which sample short "
                "runs and charge interrupts to whoever they interrupt). swdma's threads copy on the CPUs the "
                "co-runners run on; a DMA engine's copy would not.", ""]
        out += table(["folio", "load", "setting", "co-runners", "migrating process", "swdma"],
                     [[folio_label(e["folio_kb"]), e["load"], e["setting"], fmt_summary(e["corun_cpu_share"], 3),
                       fmt_summary(e["task_cpu_share"], 3), fmt_summary(e["engine_cpu_share"], 3)] for e in sh])
    ph = [e for e in rs if e.get("wait_share")]
    if ph:
        out += ["", "Where dcbm's batches spent the migrating task's time (`dcbm_batch`), in shares of the "
                "move_pages() call: feeding the engine or waiting for it (submission and wait), and in dcbm's "
                "setup and completion.", ""]
        out += table(["folio", "load", "setting", "engine", "dcbm"],
                     [[folio_label(e["folio_kb"]), e["load"], e["setting"], fmt_summary(e["wait_share"], 2),
                       fmt_summary(e["dcbm_cpu_share"], 2)] for e in ph])
    out += ["", "### CPU time per GB migrated", "",
            "The migrating process's system time, the other threads' (kworkers: mtcopy's workers; not the "
            "co-runners) and swdma's channel threads (a software engine copying with the guest's CPUs: the "
            "time a DMA engine would not take from them); means over the reps.", ""]
    out += table(["folio", "load", "setting", "task sys s/GB", "other threads s/GB", "swdma s/GB"],
                 [[folio_label(e["folio_kb"]), e["load"], e["setting"],
                   *(f"{e['cpu_s_per_gb'][k]:.3f}" for k in ("stime", "helpers", "engine"))] for e in rs])
    return out


def memcpy_section(data):
    if not data["memcpy"]:
        return []
    if data["env"].get("accel") == "icount":	# not a bandwidth there; shows that vCPUs take turns
        by = {t: statistics.fmean(m["gbps"] for m in ms) for (t,), ms in group(data["memcpy"], "threads").items()}
        return ["", "## In-guest memcpy", "",
                "Not a bandwidth under icount: GB per 10^9 instructions of migbench's user-space memcpy, by "
                "threads (mean over boots and offsets): " +
                ", ".join(f"{t} thread{'s' if t > 1 else ''} {g:.3f}" for t, g in sorted(by.items())) +
                ". The same figure for every thread count is what one host thread running every vCPU gives: "
                "the threads add their instructions and take turns, no speed-up."]
    rows = [[m["kernel"], m["boot"], m["threads"], "aliased" if not m["dst_offset"] else
             f"+{m['dst_offset'] // 1024}K", f"{m['gbps']:.3f}"] for m in data["memcpy"]]
    return ["", "## In-guest memcpy bandwidth (the copy bound)", "",
            "Destination at the same offset modulo 2 MiB as the source (aliased in QEMU's TLB, as a 2M folio "
            "copy is) or 64 KiB further.", ""] + table(["kernel", "boot", "threads", "dst", "GB/s"], rows)


def report(data):
    out = env_section(data)
    for section in (default_section, instructions_section, sizes_section, count_section, threads_section,
                    latency_section, pipeline_section, busy_section, memcpy_section):
        out += section(data)
    return "\n".join(out) + "\n"


# ---- plots ------------------------------------------------------------------

def plots(data, prefix):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    accel = data["env"].get("accel")

    def save(fig, exp, ax):
        name = "Instructions per migrated 4K page" if exp == "sizes" and accel == "icount" else EXPERIMENTS[exp]
        ax.set_title(name + {"tcg": " (QEMU TCG: compare ratios)",
                                         "icount": " (QEMU icount: 1 ns = 1 instruction)"}.get(accel, ""),
                     fontsize=10)
        fig.tight_layout()
        fig.savefig(f"{prefix}-{exp}.png", dpi=110)
        plt.close(fig)
        written.append(f"{prefix}-{exp}.png")

    written = []
    res = data["results"]
    if res["sizes"]:
        # under icount the cost, instructions per page; otherwise throughput
        y, yl = ("ns_per_page", "instructions per 4K page (mean ± sd)") if accel == "icount" else \
            ("gbps", "GB/s (mean ± sd)")
        sizes = sorted({s["folio_kb"] for s in res["sizes"]})
        sets = list(dict.fromkeys(s["setting"] for s in res["sizes"]))
        fig, ax = plt.subplots(figsize=(10, 4.5))
        w = 0.8 / len(sets)
        for i, name in enumerate(sets):
            pts = [(sizes.index(s["folio_kb"]), s[y]) for s in res["sizes"] if s["setting"] == name]
            ax.bar([x + (i - (len(sets) - 1) / 2) * w for x, _ in pts], [g["mean"] for _, g in pts], w,
                   yerr=[g["sd"] for _, g in pts], capsize=2, label=name)
        ax.set_xticks(range(len(sizes)), [folio_label(kb) for kb in sizes])
        ax.set_xlabel("folio size")
        ax.set_ylabel(yl)
        ax.legend(fontsize=8)
        save(fig, "sizes", ax)
    curves = {"count": (res["count"], "folios_per_call", "us_per_call", "folios per call", "µs per call", True),
              "threads": (res["threads"], "threads", "gbps", "threads / channels", "GB/s", False),
              "latency": (res["latency"], "batch_pages", "first_ms", "max_batch_pages", "first-folio ms", True)}
    for exp, (rs, x, y, xl, yl, log) in curves.items():
        if not rs or (exp == "threads" and accel == "icount"):	# no speed-up to see there
            continue
        kbs = sorted({e["folio_kb"] for e in rs})
        fig, axes = plt.subplots(1, len(kbs), figsize=(5 * len(kbs), 4), squeeze=False)
        for ax, kb in zip(axes[0], kbs):
            for (name,), es in group([e for e in rs if e["folio_kb"] == kb], "migrator" if exp == "threads"
                                     else "setting").items():
                es = sorted((e for e in es if e.get(y)), key=lambda e: e[x])
                ax.errorbar([e[x] for e in es], [e[y]["mean"] for e in es], yerr=[e[y]["sd"] for e in es],
                            marker="o", capsize=2, label=name)
            ax.set_xscale("log", base=2)
            if log:
                ax.set_yscale("log")
            ax.set_xlabel(f"{xl} ({folio_label(kb)} folios)")
            ax.set_ylabel(yl)
            ax.legend(fontsize=8)
        save(fig, exp, axes[0][0])
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("inputs", nargs="+", help="JSON-lines files: the environment and each boot's output")
    ap.add_argument("--out", required=True, help="path prefix, e.g. results/bench")
    args = ap.parse_args()
    data = analyse(read_lines(args.inputs))
    if not data["reps"]:
        sys.exit("no benchmark results found")
    with open(args.out + ".json", "w") as f:
        json.dump(data, f, indent=1)
    md = report(data)
    with open(args.out + ".md", "w") as f:
        f.write(md)
    pngs = plots(data, args.out)
    print(md)
    print(f"wrote {args.out}.json, {args.out}.md, " + ", ".join(pngs))


if __name__ == "__main__":
    main()
