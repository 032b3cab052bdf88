"""What the metrics cost (bench.py --only-metrics, or a phase of the bench).

A group of 2 workers (1,024 partitions, as every group) routing to 10
gateways, under the emulator's Modify Bearer load:

  * a scrape of its console's /metrics: wall time per scrape as a client
    sees it (connection, collection, serialisation, transfer), the console's
    own time to collect and serialise (console.last_scrape_us), and bytes,
    over `scrapes` scrapes one after the other, idle and under load (median,
    p99, max);
  * the data path's CPU per transaction (forwarder and workers, from
    /proc/<pid>/task/*/schedstat) with a scrape every second against none,
    in runs of the same rate taken in turn (ABAB...), medians and their
    ratio; and the console's CPU per scrape.

Every run is bounded in time; every process it starts is stopped by PID.
"""
import json
import os
import statistics
import threading
import time
import urllib.request

from bench_common import cpu_ns, log

GATEWAYS = [f"127.201.0.{21 + i}" for i in range(10)]
PGWS = ",".join(GATEWAYS)


def routing():
    lines = ["version: 1", "pools:", "  bench:", "    gateways:"]
    lines += [f"      - {{name: pgw{i + 1}, address: {a}}}" for i, a in enumerate(GATEWAYS)]
    # Echo every second, as an operator would have it; the emulated PGWs come
    # and go between runs, so they are let miss up to 100 before they count
    # as down.
    lines += ["rules:", "  - name: all", "    pool: bench", "health_check: {interval_ms: 1000, misses: 100}", ""]
    return "\n".join(lines)


def scrape(url):
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read()
    return time.perf_counter() - t0, len(body)


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * q))]


def console_us(group):
    st = json.loads(group.gtpcp("status", "--json").stdout)
    for p in st["processes"]:
        if p["name"] == "console":
            return p.get("counters", {}).get("console.last_scrape_us")
    return None


def scrape_series(group, url, count):
    """`count` scrapes one after the other: client wall times (ms), the
    console's own collection and serialisation time after each (ms, read
    from its segment through gtpcp status every tenth scrape), bytes."""
    walls, own, size = [], [], 0
    for i in range(count):
        wall, size = scrape(url)
        walls.append(wall * 1e3)
        if i % 10 == 0:
            us = console_us(group)
            if us is not None:
                own.append(us / 1e3)
    return {"wall_ms": {"median": statistics.median(walls), "p99": percentile(walls, 0.99), "max": max(walls)},
            "console_ms": {"median": statistics.median(own), "max": max(own)} if own else None,
            "bytes": size, "scrapes": count}


def run(bin_dir, work, bench, rate, duration, pairs=3, scrapes=200):
    """`bench`: the bench module (Group, run_peer, modifies, calibrate), so
    that the runs are the data path's own."""
    os.makedirs(work, exist_ok=True)
    group = bench.Group(bin_dir, 2, work, routing=routing())
    pgw = None
    try:
        log("  metrics: " + group.start())
        url = f"http://{bench.PROXY}:9123/metrics"
        console_pid = group.console_pid
        proxy = bench.Pids(group.pids)
        idle = scrape_series(group, url, scrapes)
        log(f"    scrape idle: {idle['wall_ms']['median']:.2f} ms median, {idle['wall_ms']['p99']:.2f} ms p99 "
            f"(console's own: {idle['console_ms']['median'] if idle['console_ms'] else float('nan'):.2f} ms), "
            f"{idle['bytes']} bytes")

        # Under load: a modify-only run while the scrapes go on.
        loaded = {}
        done = threading.Event()

        def scraper():
            loaded.update(scrape_series(group, url, scrapes))
            done.set()
        t = threading.Thread(target=scraper)
        setup = bench.calibrate(bin_dir, proxy, 5000, False, work, pgw=PGWS)
        t.start()
        bench.run_peer(bin_dir, rate, duration, 5000, False, work, proxy, pgw=PGWS)
        t.join(timeout=60)
        if loaded:
            log(f"    scrape under {rate} tx/s: {loaded['wall_ms']['median']:.2f} ms median, "
                f"{loaded['wall_ms']['p99']:.2f} ms p99, {loaded['bytes']} bytes")

        # CPU per transaction, with a scrape every second and without, in turn.
        results = {"none": [], "every_1s": []}
        console_cpu, console_scrapes = 0, 0
        for i in range(pairs * 2):
            mode = "none" if i % 2 == 0 else "every_1s"
            stop = threading.Event()
            count = [0]

            def every_second():
                while not stop.wait(1.0):
                    scrape(url)
                    count[0] += 1
            c0 = cpu_ns(console_pid)
            ticker = threading.Thread(target=every_second) if mode == "every_1s" else None
            if ticker:
                ticker.start()
            summary, us = bench.measure(bin_dir, proxy, rate, duration, 5000, False, work, setup, pgw=PGWS)
            if ticker:
                stop.set()
                ticker.join()
                console_cpu += cpu_ns(console_pid) - c0
                console_scrapes += count[0]
            results[mode].append(us)
            log(f"    {mode:>8}: {us:.2f} us CPU per Modify Bearer ({bench.modifies(summary)} transactions, "
                f"{summary['timeouts']} timeouts)")
        none = statistics.median(results["none"])
        every = statistics.median(results["every_1s"])
        per_scrape_ms = console_cpu / console_scrapes / 1e6 if console_scrapes else None
        log(f"    data path CPU per Modify Bearer: {none:.2f} us without scrapes, {every:.2f} us with one every "
            f"second: ratio {every / none:.3f} (medians of {pairs})")
        if per_scrape_ms is not None:
            log(f"    console CPU per scrape: {per_scrape_ms:.2f} ms")
        return {"gateways": len(GATEWAYS), "workers": 2, "partitions": 1024, "rate": rate,
                "scrape_idle": idle, "scrape_loaded": loaded or None,
                "cpu_us_per_txn": {"none": results["none"], "every_1s": results["every_1s"],
                                   "median_none": none, "median_every_1s": every, "ratio": every / none},
                "console_cpu_ms_per_scrape": per_scrape_ms}
    finally:
        group.stop()
