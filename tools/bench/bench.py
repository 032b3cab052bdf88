#!/usr/bin/env python3
"""gtpcp bench: what the data path costs, measured on this machine.

Starts a gtpcp group on loopback, drives it with gtpcp-peer (SGW and PGW
emulation) in modify-only mode, and prints:

  * the highest Modify Bearer rate sustained with zero errors (no timeout, no
    mismatch, no socket drop, >= 98% of the target rate achieved),
  * latency p50 / p99 / p99.9 at 90% of that rate,
  * the proxy's CPU time per transaction: the forwarder's and the workers'
    run time from /proc/<pid>/task/*/schedstat, over the 90% run,
  * the same emulator through gtpcp-relay, a bare UDP relay (recvmmsg /
    sendmmsg, no parsing, no state), at the same rate: the floor, and the
    ratio of the two,
  * the floors under those latencies, measured in the same run: the emulator
    talking to itself (SGW straight to PGW, no process between) at the same
    rate, and the wall time each CPU loses to the host (gtpcp-cpu-stalls,
    before any load). No process on this machine can have a p99 below what
    those allow.

  * overload: established subscribers running Modify Bearer at a quarter of
    that rate, alone and then during a surge of session creations at three
    times what the group can create (gtpcp-blast), with their p99 in both
    cases and what became of the surge (accepted, refused by the forwarder
    with No resources available).

  * persistence: storage off, async and sync to the embedded Redis, each
    mode's highest error-free Modify Bearer rate, then all three at one rate
    near the slowest one's saturation: forwarder + worker CPU per
    transaction and its ratio to storage off, persister and redis-server
    CPU, Redis commands per transaction, the persister's lag, latencies.

  * start: from launching `gtpcp start` (storage off, embedded Redis) to
    its exit and to the group's first answer to an Echo Request, to a
    Create Session Request and (cold start on Redis) to a Modify Bearer
    Request of a session stored in Redis only; each request sent every
    millisecond from the launch, --start-runs launches per series (median,
    min, max). --only-start runs this phase alone.

  * metrics: a group of 2 workers and 10 gateways under load, its console's
    /metrics scraped: time and bytes per scrape, and the data path's CPU per
    transaction with a scrape every second against none, in turn, in one
    run (bench_metrics.py). --only-metrics runs this phase alone.

  * --v1 (alone): GTPv1-C (Gn/Gp), the same load through gtpcp and through
    osmo-gtphub, their transactions per second and CPU per transaction
    (bench_v1.py).

Then the codec micro-benchmarks. The emulator runs on the same cores as the
proxy, so the highest rate is the machine's, not the proxy's alone; CPU per
transaction is the figure that compares across machines.

Every run is bounded in time; every process it starts is stopped by PID.
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import bench_metrics
import bench_v1
from bench_common import cpu_ns, log, terminate
import start_probe as sp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Addresses of this benchmark, apart from the defaults of hand-run tools.
PROXY = "127.201.0.1"
SGWS = ["127.201.0.11", "127.201.0.12"]
PGW = "127.201.0.21"
SURGE_GATEWAY = "127.201.0.22"  # nothing listens there


class Group:
    def __init__(self, bin_dir, workers, work, routing=None, cpu=None, storage="  mode: off\n", big_rings=True):
        self.bin = bin_dir
        self.dir = work
        self.config = os.path.join(work, "gtpcp.yaml")
        with open(os.path.join(work, "routing.yaml"), "w") as f:
            f.write(routing or f"version: 1\npools:\n  bench:\n    gateways:\n      - {{name: pgw, address: {PGW}}}\n"
                    "rules:\n  - name: all\n    pool: bench\n")
        with open(self.config, "w") as f:
            f.write(f"group: bench{os.getpid()}\nrun_dir: {work}/run\nworkers: {workers}\n"
                    f"routing: routing.yaml\nlog:\n  level: warn\ngtpc:\n  access:\n    ipv4: {PROXY}\n"
                    f"management:\n  listen: [\"{PROXY}:9123\"]\n"
                    # Rings for the highest rates, or the defaults (the start phase: what an operator starts).
                    + ("rings:\n  priority_slots: 65536\n  new_slots: 16384\n" if big_rings else "") +
                    # The data path alone unless asked: persistence is measured on its own.
                    "storage:\n" + storage)
            if cpu is not None:
                f.write(f"cpu:\n  forwarder: {cpu}\n  workers: [{', '.join([str(cpu)] * workers)}]\n")

    def argv(self, *args):
        return [os.path.join(self.bin, "gtpcp"), "-c", self.config, *args]

    def gtpcp(self, *args):
        return subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=60)

    def start(self):
        r = self.gtpcp("start")
        if r.returncode != 0:
            raise RuntimeError("gtpcp start failed:\n" + r.stdout + r.stderr)
        startup = r.stdout.strip().splitlines()[-1]
        status = json.loads(self.gtpcp("status", "--json").stdout)
        # The proxy's own processes; the embedded redis-server is counted apart,
        # and the supervisor and the management process are not on the data path.
        self.pids = [p["pid"] for p in status["processes"]
                     if p["pid"] and p["name"] not in ("redis", "watchdog", "console")]
        self.console_pid = next((p["pid"] for p in status["processes"] if p["name"] == "console"), None)
        self.redis_pids = [p["pid"] for p in status["processes"] if p["pid"] and p["name"] == "redis"]
        self.persister_pids = [p["pid"] for p in status["processes"] if p["pid"] and p["name"] == "persister"]
        return startup

    def cpu_ns(self):
        return sum(cpu_ns(p) for p in self.pids)

    def stop(self):
        self.gtpcp("stop")


class Relay:
    def __init__(self, bin_dir):
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "gtpcp-relay"), "--listen", PROXY, "--upstream", PGW,
             "--pairs", ",".join(SGWS)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pids = [self.proc.pid]
        time.sleep(0.2)  # it binds before its first poll; a failed bind exits at once
        if self.proc.poll() is not None:
            raise RuntimeError("gtpcp-relay did not start")

    def cpu_ns(self):
        return cpu_ns(self.proc.pid)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Nothing:
    """No process between SGW and PGW: the emulator's own floor."""
    pids = []

    def cpu_ns(self):
        return 0


def cpu_stalls(bin_dir, seconds=3):
    r = subprocess.run([os.path.join(bin_dir, "gtpcp-cpu-stalls"), str(seconds)],
                       capture_output=True, text=True, timeout=seconds + 30)
    return json.loads(r.stdout)


def run_peer(bin_dir, rate, duration, subscribers, relay, work, target, direct=False, pgw=PGW):
    """One modify-only run; returns (summary dict, CPU ns of `target` during it).

    direct: the SGW sends straight to the PGW, no process between. pgw: the
    emulated PGWs, comma-separated."""
    out = os.path.join(work, "peer.json")
    if os.path.exists(out):
        os.remove(out)  # a failed run must not leave the previous run's figures to be read
    args = [os.path.join(bin_dir, "gtpcp-peer"), "--proxy", PGW if direct else PROXY, "--sgw", ",".join(SGWS), "--pgw", pgw,
            "--mode", "modify-only", "--subscribers", str(subscribers), "--rate", str(rate),
            "--setup-rate", "5000", "--duration", str(duration), "--t3-ms", "1000", "--n3", "1",
            "--json", out]
    if relay or direct:
        args.append("--relay")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # The CPU of the whole run, attach and detach included: measure()
    # subtracts what calibrate() measured for those alone.
    before = target.cpu_ns()
    try:
        proc.wait(timeout=duration + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RuntimeError("gtpcp-peer did not finish")
    after = target.cpu_ns()
    with open(out) as f:
        summary = json.load(f)
    return summary, after - before


class Pids:
    """CPU of a set of processes, for run_peer()."""
    def __init__(self, pids):
        self.pids = pids

    def cpu_ns(self):
        return sum(cpu_ns(p) for p in self.pids)


def redis_calls(port):
    """Commands a redis-server has executed (INFO commandstats, summed)."""
    r = subprocess.run(["redis-cli", "-p", str(port), "INFO", "commandstats"], capture_output=True, text=True,
                       timeout=10)
    total = 0
    for line in r.stdout.splitlines():
        if line.startswith("cmdstat_") and "calls=" in line:
            total += int(line.split("calls=")[1].split(",")[0])
    return total


# The storage configurations the persistence phase compares. Groups run one
# at a time, each stopped (gtpcp stop waits for its processes) before the
# next starts; async and sync have distinct ports all the same, so that a
# redis-server a failed stop left behind cannot answer for the other mode.
STORAGE_MODES = [
    ("off", "  mode: off\n", None),
    ("async", "  mode: embedded\n  embedded_port: 16399\n", 16399),
    ("sync", "  mode: embedded\n  embedded_port: 16398\n  persist: sync\n", 16398),
    # Sync on a primary with a replica: each batch also waits for the
    # replica's copy (WAIT, storage.sync_replicas).
    ("sync+replica", "  mode: single\n  servers: [\"127.0.0.1:16397\"]\n  persist: sync\n  sync_replicas: 1\n", 16397),
]
# The replica of "sync+replica" listens here.
REPLICA_PORT = 16396


@contextlib.contextmanager
def replicated_redis(work, port, replica_port):
    """A redis-server primary on `port` and its replica on `replica_port`,
    the replica attached before it yields their pids; both stopped on exit."""
    procs = []
    try:
        for p, extra in ((port, []), (replica_port, ["--replicaof", "127.0.0.1", str(port)])):
            d = os.path.join(work, f"redis-{p}")
            os.makedirs(d, exist_ok=True)
            procs.append(subprocess.Popen(["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                                           "--appendonly", "no", "--dir", d] + extra,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 10
        while True:
            r = subprocess.run(["redis-cli", "-p", str(port), "ROLE"], capture_output=True, text=True, timeout=5)
            if str(replica_port) in r.stdout.split():
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica on {replica_port} never attached to {port}")
            time.sleep(0.05)
        yield [pr.pid for pr in procs]
    finally:
        for pr in procs:
            pr.terminate()
            pr.wait(10)
# Rungs of each mode's search, as fractions of the data path's highest rate:
# no mode can go beyond the data path alone, and persistence may cost most
# of it, hence the low first rung.
PERSIST_LADDER = (0.25, 0.4, 0.55, 0.7, 0.85, 1.0)
# The issue's target: async persistence adds at most this to the
# forwarder's and worker's CPU per transaction.
ASYNC_TARGET = 1.25


@contextlib.contextmanager
def storage_group(bin_dir, work, name, storage):
    """A one-worker group (per-core figures) with `storage`, in a directory
    of its own (no Redis data left by an earlier group), stopped on exit."""
    gwork = os.path.join(work, "persist-" + name)
    os.makedirs(gwork)
    with contextlib.ExitStack() as stack:
        external = None
        if name.startswith("sync+replica"):
            external = stack.enter_context(replicated_redis(gwork, 16397, REPLICA_PORT))
        group = Group(bin_dir, 1, gwork, storage=storage)
        try:
            log(f"  persistence {name}: " + group.start())
            if external:
                group.redis_pids = external  # the primary's and the replica's CPU
            yield group, gwork
        finally:
            group.stop()


def storage_costs(group, port):
    """(persister CPU ns, redis-server CPU ns, Redis commands) so far."""
    return (Pids(group.persister_pids).cpu_ns(), Pids(group.redis_pids).cpu_ns(),
            redis_calls(port) if port else 0)


def persistence_at(bin_dir, work, name, storage, port, rate, duration, subscribers):
    """One mode at `rate`: CPU per Modify Bearer of the proxy, the persister
    and redis-server, Redis commands per Modify Bearer, the persister's lag
    and the emulator's latencies."""
    with storage_group(bin_dir, work, name + "-at-rate", storage) as (group, gwork):
        # forwarder + worker alone; the persister and redis-server apart.
        proxy = Pids([p for p in group.pids if p not in group.persister_pids])
        c0 = storage_costs(group, port)
        setup = calibrate(bin_dir, proxy, subscribers, False, gwork)
        c1 = storage_costs(group, port)
        # The persister's lag as gtpcp status reports it, every 100 ms. Done
        # in every mode, off included, so all three carry the same extra load.
        lags, done = [], threading.Event()

        def sample():
            while not done.wait(0.1):
                st = json.loads(group.gtpcp("status", "--json").stdout)
                lags.extend(p["counters"].get("persister.lag_ms", 0) for p in st["processes"]
                            if p["name"] == "persister" and "counters" in p)
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            summary, proxy_us = measure(bin_dir, proxy, rate, duration, subscribers, False, gwork, setup)
        finally:
            done.set()
            sampler.join()
        c2 = storage_costs(group, port)
    n = modifies(summary)
    # What calibrate() saw for attaches and detaches alone is subtracted, as
    # for the proxy: what remains is the Modify Bearers' own.
    persister_ns, redis_ns, calls = ((c2[k] - c1[k]) - (c1[k] - c0[k]) for k in range(3))
    stored = port is not None and n > 0  # storage off: no persister, no redis-server
    lags.sort()
    return {"cpu_us_per_txn": proxy_us,
            "persister_cpu_us_per_txn": persister_ns / n / 1000 if stored else None,
            "redis_cpu_us_per_txn": redis_ns / n / 1000 if stored else None,
            "redis_commands_per_txn": calls / n if stored else None,
            "lag_ms_p99": lags[int(len(lags) * 0.99)] if lags else None,
            "latency_ms": summary["latency_ms"]["modify_bearer"],
            "transactions": n, "timeouts": summary["timeouts"]}


def persistence(bin_dir, work, top, duration, subscribers, budget=240.0):
    """Storage off, async and sync persistence to the embedded Redis, compared
    at saturation.

    At a rate of its own per mode, contention for the CPUs would change how
    the persister batches and so the CPU per transaction; hence first each
    mode's highest error-free Modify Bearer rate (steps of `duration` s over
    PERSIST_LADDER x `top`, `top` being the data path's), then all three at
    one rate R, 0.9 x the lowest of those: near the slowest mode's
    saturation, under the same offered load. Measured runs last 2 x
    `duration`. The searches share 70% of `budget` seconds; the three
    measured runs are bounded by count."""
    started = time.monotonic()
    ladder = sorted({max(1000, int(top * f)) for f in PERSIST_LADDER})
    share = budget * 0.7 / len(STORAGE_MODES)
    maxima = {}
    for i, (name, storage, _) in enumerate(STORAGE_MODES):
        with storage_group(bin_dir, work, name + "-search", storage) as (group, gwork):
            # A deadline per mode, carrying over what earlier ones left:
            # a slow search cannot starve the modes after it.
            deadline = started + share * (i + 1)
            maxima[name] = find_max(bin_dir, group, ladder, duration, subscribers, False, gwork, deadline)
    found = [m for m in maxima.values() if m is not None]
    # A mode with no error-free rung is measured at R anyway (overloaded),
    # rather than dropping the comparison.
    rate = int(0.9 * min(found)) if found else ladder[0] // 2
    out = {"top": top, "ladder": ladder, "rate": rate, "modes": {}}
    for name, storage, port in STORAGE_MODES:
        out["modes"][name] = persistence_at(bin_dir, work, name, storage, port, rate, duration * 2, subscribers)
        out["modes"][name]["max_rate"] = maxima[name]
    off = out["modes"]["off"]["cpu_us_per_txn"]
    for name in ("async", "sync", "sync+replica"):
        out[name + "_over_off"] = out["modes"][name]["cpu_us_per_txn"] / off
    out["seconds"] = time.monotonic() - started

    def fig(v, spec):
        return "-" if v is None else format(v, spec)
    log("")
    log(f"  persistence: each mode's highest error-free Modify Bearer rate, then all at R = {rate:,}/s "
        "(0.9 x the lowest); CPU in us per Modify Bearer, attaches and detaches subtracted")
    log("    mode          highest  proxy us  /off  persister us  redis us  cmds/txn  lag p99 ms"
        "  latency p50 / p99 / p99.9 ms  timeouts")
    for name, _, _ in STORAGE_MODES:
        m = out["modes"][name]
        lat = m["latency_ms"]
        log(f"    {name:<12} {fig(m['max_rate'], ',d'):>8} {m['cpu_us_per_txn']:9.2f} {m['cpu_us_per_txn'] / off:5.2f} "
            f"{fig(m['persister_cpu_us_per_txn'], '.2f'):>13} {fig(m['redis_cpu_us_per_txn'], '.2f'):>9} "
            f"{fig(m['redis_commands_per_txn'], '.2f'):>9} {fig(m['lag_ms_p99'], 'd'):>11}  "
            f"{lat['p50']:>11.3f} / {lat['p99']:.3f} / {lat['p99_9']:.3f} {m['timeouts']:>9}")
    verdict = "met" if out["async_over_off"] <= ASYNC_TARGET else "NOT met"
    log(f"    async adds {(out['async_over_off'] - 1) * 100:.0f}% forwarder + worker CPU per transaction, "
        f"sync {(out['sync_over_off'] - 1) * 100:.0f}%, sync with a replica "
        f"{(out['sync+replica_over_off'] - 1) * 100:.0f}% (target: async <= {(ASYNC_TARGET - 1) * 100:.0f}%, {verdict}); "
        f"phase took {out['seconds']:.0f} s")
    return out


# The start phase's subscribers, SGW (its probes' source address) and series
# of launches: storage off and the embedded Redis (ports of their own), each
# timing an Echo Request and a Create Session Request, then the embedded
# Redis again timing a Modify Bearer Request of a session stored in Redis only.
START_IMSI = 1010000900001  # 001010000900001
START_SGW = "127.201.0.31"
START_SERIES = [
    ("off", "  mode: off\n", ("echo", "create")),
    ("embedded", "  mode: embedded\n  embedded_port: 16397\n", ("echo", "create")),
    ("restoring", "  mode: embedded\n  embedded_port: 16396\n", ("modify",)),
]
# Bound of one launch: a group that has not answered by then has failed.
START_TIMEOUT_S = 3.0
# The issue's target for the first answer to a session stored in Redis only
# (restored lazily), and the reference product's median.
START_TARGET_S, START_REFERENCE_S = 0.100, 0.135


def start_launches(group, gwork, runs, imsis, kinds):
    """`runs` + 1 launches of `group`, each probed from its launch with the
    requests named in `kinds` and stopped before the next. The first one is
    not counted: it fills the page cache and, for "modify", creates one
    session per counted launch, so that each of them modifies a session of
    its own that, after gtpcp stop (which removes the shared memory), lives
    in Redis only. Returns one sample per counted launch."""
    samples, stored = [], []
    for i in range(runs + 1):
        sequence = 0x1000 + 0x10 * i
        probes = []
        if "echo" in kinds:
            probes.append(sp.Probe("echo", START_SGW, sp.echo_request, sp.ECHO_RESPONSE, sequence))
        if "create" in kinds:
            imsi = next(imsis)
            probes.append(sp.Probe("create", START_SGW, lambda q, imsi=imsi, i=i: sp.create_session_request(
                q, imsi, START_SGW, 0x10000 + i), sp.CREATE_SESSION_RESPONSE, sequence))
        if "modify" in kinds and i > 0:
            s_imsi, s_teid = stored.pop()
            probes.append(sp.Probe("modify", START_SGW, lambda q, s_imsi=s_imsi, s_teid=s_teid:
                                   sp.modify_bearer_request(q, s_teid, s_imsi, START_SGW),
                                   sp.MODIFY_BEARER_RESPONSE, sequence))
        log_path = os.path.join(gwork, f"start-{i}.log")
        try:
            exited, rc = sp.launch_and_probe(group.argv("start"), probes, PROXY, log_path, timeout=START_TIMEOUT_S)
            if rc != 0:
                with open(log_path) as f:
                    raise RuntimeError("gtpcp start failed:\n" + f.read())
            said = json.loads(group.gtpcp("status", "--json").stdout).get("start_seconds")
            if i == 0 and "modify" in kinds:
                stored = create_sessions(runs, imsis)
        finally:
            group.stop()
            for p in probes:
                p.close()
        if i > 0:
            samples.append({"exits": exited, "status_says": said, **{p.name: p.answered for p in probes},
                            "sent": {p.name: p.sent for p in probes},
                            "refused": {p.name: {"count": len(p.refused), "causes": sorted(set(p.refused))}
                                        for p in probes if p.refused}})
    return samples


def create_sessions(count, imsis):
    """`count` sessions created through the running group, one after the
    other: [(IMSI, the proxy's control TEID toward the SGW)]."""
    sessions = []
    for k in range(count):
        imsi = next(imsis)
        probe = sp.Probe("create", START_SGW, lambda q, imsi=imsi, k=k: sp.create_session_request(
            q, imsi, START_SGW, 0x20000 + k), sp.CREATE_SESSION_RESPONSE, 0x2000 + k)
        try:
            sp.exchange(probe, PROXY, timeout=2.0)
        finally:
            probe.close()
        teid = probe.answer[4].get(sp.IF_PGW_GTPC) if probe.answer else None
        if teid is None:
            raise RuntimeError(f"the group did not accept a Create Session Request for IMSI {imsi:015d} "
                               f"(answers refusing it: {probe.refused})")
        sessions.append((imsi, teid))
    return sessions


def start_phase(bin_dir, work, runs, workers):
    """Time from launching `gtpcp start` to its exit and to the first answers
    of the group: an Echo Request (the forwarder answers it) and a Create
    Session Request (a worker and the emulated PGW answer it), with storage
    off and with the embedded Redis; then a Modify Bearer Request of a
    session that exists in Redis only (the cold start restores it when
    asked). Each request is sent every millisecond from the launch until
    accepted; `runs` launches per series after one not counted; median, min
    and max. The probes cost the machine little: `gtpcp start` exits as
    fast with them as without, within the noise."""
    started = time.monotonic()
    subscribers = 3 * runs + 2  # a creation per launch, and the stored sessions
    pgw = subprocess.Popen([os.path.join(bin_dir, "gtpcp-peer"), "--pgw", PGW, "--proxy", PROXY,
                            "--imsi-start", f"{START_IMSI:015d}", "--subscribers", str(subscribers),
                            "--duration", "900"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {"runs": runs, "workers": workers, "timeout_s": START_TIMEOUT_S, "series": {}}
    try:
        probe = sp.Probe("echo", START_SGW, sp.echo_request, sp.ECHO_RESPONSE, 1)
        try:
            if not sp.exchange(probe, PGW, timeout=5.0):
                raise RuntimeError("the emulated PGW did not answer an Echo Request within 5 s")
        finally:
            probe.close()
        imsis = iter(range(START_IMSI, START_IMSI + subscribers))
        for name, storage, kinds in START_SERIES:
            gwork = os.path.join(work, "start-" + name)
            os.makedirs(gwork)
            group = Group(bin_dir, workers, gwork, storage=storage, big_rings=False)
            out["series"][name] = {"samples": start_launches(group, gwork, runs, imsis, kinds)}
    finally:
        terminate(pgw)
    out["seconds"] = time.monotonic() - started

    columns = [("exits", "gtpcp start exits"), ("status_says", "gtpcp status says"), ("echo", "first Echo"),
               ("create", "first Create Session"), ("modify", "first Modify Bearer")]
    log("")
    log(f"  start: {runs} launches per series (one more before them, not counted), {workers} worker(s); "
        "each request sent every 1 ms from the launch until accepted; seconds from the launch, median (min..max)")
    log("    series     " + "".join(f"{title:<26}" for _, title in columns))
    notes = []
    for name, _, _ in START_SERIES:
        m = out["series"][name]
        cells = []
        for key, title in columns:
            values = [s[key] for s in m["samples"] if key in s]
            got = sorted(v for v in values if v is not None)
            m[key] = {"median": statistics.median(got), "min": got[0], "max": got[-1]} if got else {}
            if len(got) < len(values):
                m[key]["unanswered"] = len(values) - len(got)
                notes.append(f"{name}: {title}: nothing accepted within {START_TIMEOUT_S:.0f} s in "
                             f"{len(values) - len(got)} of {len(values)} launches")
            cell = f"{statistics.median(got):.3f} ({got[0]:.3f}..{got[-1]:.3f})" if got else "-"
            cells.append(f"{cell:<26}")
        log(f"    {name:<10} " + "".join(cells))
        refused = {}
        for s in m["samples"]:
            for probe, r in s["refused"].items():
                count, causes = refused.get(probe, (0, set()))
                refused[probe] = (count + r["count"], causes | set(r["causes"]))
        for probe, (count, causes) in sorted(refused.items()):
            notes.append(f"{name}: {count} answers refusing the {probe} request (cause "
                         f"{', '.join(str(c) for c in sorted(causes))}), each followed by a new attempt")
    log("    (restoring: the embedded Redis holds the session, the shared memory was removed by gtpcp stop)")
    for note in notes:
        log("    " + note)

    def median(series, key):
        st = out["series"][series].get(key, {})
        return f"{st['median']:.2f}" if "median" in st else "-"
    first = out["series"]["restoring"]["modify"]
    if "median" not in first or first.get("unanswered"):
        verdict = "NOT met (not every launch answered)"
    else:
        verdict = "met" if first["median"] <= START_TARGET_S else "NOT met"
    log(f"    start (embedded Redis, median of {runs}): gtpcp start exits {median('embedded', 'exits')} s; "
        f"first Echo answered {median('embedded', 'echo')} s; first Create Session answered "
        f"{median('embedded', 'create')} s; first Modify Bearer of a stored session {median('restoring', 'modify')} s; "
        f"target <= {START_TARGET_S:.2f} s (reference product {START_REFERENCE_S:.3f} s): {verdict}; "
        f"phase took {out['seconds']:.0f} s")
    return out


def overload(bin_dir, work, top, duration):
    """Established subscribers' latency with and without a creation surge."""
    out = {}
    # The surge's sessions (APN "surge") go to a gateway of their own that
    # never answers: the machine's two cores are not spent emulating a PGW
    # for them, and the established subscribers' PGW sees only their traffic.
    routing = (f"version: 1\npools:\n  bench:\n    gateways:\n      - {{name: pgw, address: {PGW}}}\n"
               f"  surge:\n    gateways:\n      - {{name: sink, address: {SURGE_GATEWAY}}}\n"
               "rules:\n  - {name: surge, match: {apn: [surge]}, pool: surge}\n  - {name: all, pool: bench}\n"
               "health_check: {interval_ms: 0}\nfailover: {response_timeout_ms: 0}\n")
    # Offering several times what the proxy takes needs a generator that does
    # not compete with it for a CPU: with two CPUs or more, gtpcp-blast gets
    # one of its own, and the group and the emulator share another. (Sharing
    # the generator's CPU with the emulator instead, at any priority, starves
    # one of the two on a machine of two CPUs.)
    cpus = sorted(os.sched_getaffinity(0))
    proxy_cpu, blast_cpu = (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)
    peer_cpu = proxy_cpu

    def pinned(command, cpu):
        return ["taskset", "-c", str(cpu)] + command if cpu is not None and shutil.which("taskset") else command

    group = Group(bin_dir, 1, work, routing, cpu=proxy_cpu)
    log("  overload: " + group.start() + (f"; group and emulator on CPU {proxy_cpu}, surge generator on CPU "
                                          f"{blast_cpu}" if blast_cpu is not None else ""))
    pgw = subprocess.Popen(pinned([os.path.join(bin_dir, "gtpcp-peer"), "--pgw", PGW, "--proxy", PROXY,
                            "--subscribers", "2000", "--pgw-sessions", "600000", "--duration", "120"], peer_cpu),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.2)

        def blast(rate, seconds):
            r = subprocess.run(pinned([os.path.join(bin_dir, "gtpcp-blast"), "--proxy", PROXY, "--from", SGWS[1],
                                       "--rate", str(rate), "--seconds", str(seconds), "--subscribers", "250000",
                                       "--apn", "surge"], blast_cpu),
                               capture_output=True, text=True, timeout=seconds + 30)
            return json.loads(r.stdout)

        def counters():
            st = json.loads(group.gtpcp("status", "--json").stdout)
            c = st["counters"]
            started = sum(p.get("counters", {}).get("worker.transactions_started", 0) for p in st["processes"])
            return {"refused": c.get("forwarder.rejected_overload", 0) + c.get("forwarder.rejected_stale", 0),
                    "dropped": c.get("forwarder.socket_overflows", 0), "taken": started}

        # What the group takes in per second when nothing else runs: the
        # creations a worker handled (sent on to the gateway) in 2 s.
        before = counters()
        probe = blast(1000000, 2)
        after = counters()
        capacity = (after["taken"] - before["taken"]) / 2
        log(f"    creation capacity: {capacity:,.0f}/s taken by the worker of {probe['offered_per_s']:,.0f}/s offered "
            f"({after['refused'] - before['refused']:,} refused by the forwarder)")
        surge_rate = int(max(capacity, 1000) * 3)
        rate = max(1000, int(top / 4))
        sgw = pinned([os.path.join(bin_dir, "gtpcp-peer"), "--sgw", SGWS[0], "--proxy", PROXY, "--mode", "modify-only",
                      "--subscribers", "2000", "--rate", str(rate), "--setup-rate", "5000", "--duration",
                      str(duration), "--t3-ms", "1000", "--n3", "1"], peer_cpu)

        def modify_run(name, with_surge):
            path = os.path.join(work, f"{name}.json")
            proc = subprocess.Popen(sgw + ["--json", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            surge = None
            if with_surge:
                time.sleep(1.0)  # attach first; the surge then covers the modify window
                c0 = counters()
                surge = blast(surge_rate, max(1.0, duration - 1.0))
                c1 = counters()
                surge["refused_by_forwarder"] = c1["refused"] - c0["refused"]
                surge["taken_by_worker"] = c1["taken"] - c0["taken"]
                surge["dropped_by_kernel"] = c1["dropped"] - c0["dropped"]
            proc.wait(timeout=duration + 60)
            with open(path) as f:
                return json.load(f), surge

        base, _ = modify_run("overload-base", False)
        loaded, surge = modify_run("overload-surge", True)
        b, l = base["latency_ms"]["modify_bearer"], loaded["latency_ms"]["modify_bearer"]
        log(f"    Modify Bearer at {rate:,}/s, alone:       p50 {b['p50']:.3f} ms  p99 {b['p99']:.3f} ms  "
            f"timeouts {base['timeouts']}")
        log(f"    Modify Bearer at {rate:,}/s, with surge:  p50 {l['p50']:.3f} ms  p99 {l['p99']:.3f} ms  "
            f"timeouts {loaded['timeouts']}")
        ratio = surge["offered_per_s"] / capacity if capacity else float("nan")
        log(f"    surge: {surge['offered_per_s']:,.0f} creations/s offered, {ratio:.1f}x capacity (asked "
            f"{surge_rate:,}/s), "
            f"{surge['taken_by_worker']:,} taken by the worker (with the subscribers' own transactions), "
            f"{surge['refused_by_forwarder']:,} refused by the forwarder with cause 73, "
            f"{surge['dropped_by_kernel']:,} dropped by the kernel (new-session socket full)")
        out = {"capacity_per_s": capacity, "surge_ratio": ratio, "modify_rate": rate, "alone": b, "with_surge": l, "surge": surge,
               "timeouts_alone": base["timeouts"], "timeouts_with_surge": loaded["timeouts"]}
    finally:
        terminate(pgw)
        group.stop()
    return out


def ok(summary, rate):
    # Sustained: no error of any kind, the rate achieved, and the emulator
    # never fell behind its own schedule (which is where queueing starts).
    return (summary["timeouts"] == 0 and summary["mismatches"]["total"] == 0
            and summary["malformed"]["total"] == 0 and summary["socket"]["drops"] == 0
            and summary["schedule"]["lagged"] == 0 and summary["tps_achieved"] >= 0.98 * rate)


def modifies(summary):
    return summary["transactions"]["modify_bearer"]["completed"]


def measure(bin_dir, target, rate, duration, subscribers, relay, work, setup_cost_ns, pgw=PGW):
    summary, ns = run_peer(bin_dir, rate, duration, subscribers, relay, work, target, pgw=pgw)
    n = modifies(summary)
    per_txn_us = (ns - setup_cost_ns) / n / 1000 if n else float("nan")
    return summary, per_txn_us


def calibrate(bin_dir, target, subscribers, relay, work, pgw=PGW):
    """CPU of attaching and detaching `subscribers` with no modify window."""
    summary, ns = run_peer(bin_dir, 1000, 0, subscribers, relay, work, target, pgw=pgw)
    return ns


def find_max(bin_dir, target, rates, duration, subscribers, relay, work, deadline):
    best, first_bad = None, None
    for rate in rates:
        if time.monotonic() > deadline:
            break
        summary, _ = run_peer(bin_dir, rate, duration, subscribers, relay, work, target)
        good = ok(summary, rate)
        log(f"    {rate:>7} tx/s target: {summary['tps_achieved']:>9.0f} achieved, "
            f"p99 {summary['latency_ms']['modify_bearer']['p99']:.3f} ms, timeouts {summary['timeouts']}, "
            f"drops {summary['socket']['drops']} -> {'ok' if good else 'over'}")
        if good:
            best = rate
        else:
            first_bad = rate
            break
    # Two halvings between the last good and the first bad rate.
    lo, hi = best, first_bad
    for _ in range(2):
        if lo is None or hi is None or time.monotonic() > deadline:
            break
        mid = (lo + hi) // 2
        summary, _ = run_peer(bin_dir, mid, duration, subscribers, relay, work, target)
        good = ok(summary, mid)
        log(f"    {mid:>7} tx/s target: {summary['tps_achieved']:>9.0f} achieved -> {'ok' if good else 'over'}")
        lo, hi = (mid, hi) if good else (lo, mid)
    return lo


def datapath(args, work):
    """The data path alone: host stalls, the highest error-free rate, and at
    90% of it the proxy, the bare relay and the emulator alone. Returns
    (highest rate, figures)."""
    rates = [int(r) for r in args.rates.split(",")]
    deadline = time.monotonic() + args.budget
    stalls = cpu_stalls(args.bin)
    for c in stalls["cpus"]:
        log(f"  CPU {c['cpu']}: {c['stalls']['500us']['lost_pct']:.2f}% of wall time lost in host stalls "
            f">= 0.5 ms ({c['stalls']['500us']['count']} in {stalls['seconds']:.0f} s, longest "
            f"{c['longest_ms']:.1f} ms)")
    group = Group(args.bin, args.workers, work)
    log("  " + group.start())
    try:
        log("  proxy: searching the highest error-free Modify Bearer rate")
        top = find_max(args.bin, group, rates, args.duration, args.subscribers, False, work, deadline)
        if top is None:
            raise RuntimeError("not even the lowest rate ran without errors")
        at = int(top * 0.9)
        setup = calibrate(args.bin, group, args.subscribers, False, work)
        proxy, proxy_us = measure(args.bin, group, at, args.duration * 2, args.subscribers, False, work, setup)
    finally:
        group.stop()
    relay = Relay(args.bin)
    try:
        relay_setup = calibrate(args.bin, relay, args.subscribers, True, work)
        floor, relay_us = measure(args.bin, relay, at, args.duration * 2, args.subscribers, True, work,
                                  relay_setup)
    finally:
        relay.stop()

    direct, _ = run_peer(args.bin, at, args.duration * 2, args.subscribers, False, work, Nothing(),
                         direct=True)

    lat = proxy["latency_ms"]["modify_bearer"]
    flat = floor["latency_ms"]["modify_bearer"]
    dlat = direct["latency_ms"]["modify_bearer"]
    log("")
    log(f"  highest error-free Modify Bearer rate: {top} tx/s (emulator and proxy share the machine)")
    log(f"  at 90% of it ({at} tx/s, {modifies(proxy)} transactions):")
    log(f"    proxy  latency p50 {lat['p50']:.3f} ms  p99 {lat['p99']:.3f} ms  p99.9 {lat['p99_9']:.3f} ms")
    log(f"    relay  latency p50 {flat['p50']:.3f} ms  p99 {flat['p99']:.3f} ms  p99.9 {flat['p99_9']:.3f} ms")
    log(f"    direct latency p50 {dlat['p50']:.3f} ms  p99 {dlat['p99']:.3f} ms  p99.9 {dlat['p99_9']:.3f} ms"
        " (emulator alone, SGW straight to PGW)")
    log(f"    proxy  CPU {proxy_us:.2f} us per Modify Bearer transaction (forwarder + workers)"
        f" = {1e6 / proxy_us:,.0f} transactions per CPU-second")
    log(f"    relay  CPU {relay_us:.2f} us per transaction (bare recvmmsg/sendmmsg relay)")
    log(f"    ratio  proxy / relay = {proxy_us / relay_us:.2f}")
    return top, {"top_rate": top, "rate_90": at, "proxy": {"cpu_us_per_txn": proxy_us, "latency_ms": lat},
                 "relay": {"cpu_us_per_txn": relay_us, "latency_ms": flat}, "ratio": proxy_us / relay_us,
                 "direct": {"latency_ms": dlat}, "cpu_stalls": stalls}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--workers", type=int, default=1, help="workers of the group (default 1: per-core figures)")
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per rate step")
    ap.add_argument("--subscribers", type=int, default=5000)
    ap.add_argument("--rates", default="5000,10000,20000,30000,40000,50000,60000,80000")
    ap.add_argument("--budget", type=float, default=240, help="seconds for the whole search")
    ap.add_argument("--top", type=int, help="the highest error-free Modify Bearer rate, from an earlier run: "
                    "the data-path search and measurements are skipped")
    ap.add_argument("--only-persistence", action="store_true", help="the persistence phase alone (needs --top)")
    ap.add_argument("--no-codec", action="store_true")
    ap.add_argument("--no-overload", action="store_true")
    ap.add_argument("--no-persistence", action="store_true")
    ap.add_argument("--only-start", action="store_true", help="the start phase alone")
    ap.add_argument("--no-start", action="store_true")
    ap.add_argument("--no-metrics", action="store_true")
    ap.add_argument("--only-metrics", action="store_true",
                    help="the metrics phase alone: a scrape's time and size, and the data path's CPU per "
                    "transaction with a scrape every second against none (at --rate-for-metrics)")
    ap.add_argument("--rate-for-metrics", type=int, help="Modify Bearer rate of the metrics phase "
                    "(default: half the highest error-free rate, or 10000 without one)")
    ap.add_argument("--start-runs", type=int, default=9, help="launches per series of the start phase (default 9)")
    ap.add_argument("--v1", action="store_true",
                    help="GTPv1-C alone: the same Gn/Gp load through gtpcp and through osmo-gtphub (bench_v1.py)")
    args = ap.parse_args()
    if args.v1:
        work = tempfile.mkdtemp(prefix="gtpcp-bench-v1-")
        try:
            result = bench_v1.run(args.bin, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        path = os.path.join(ROOT, "build", "bench-v1.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
        return
    if args.only_persistence:
        if args.top is None:
            ap.error("--only-persistence needs --top")
        args.no_overload = args.no_codec = args.no_start = True
    if args.only_start:
        args.no_overload = args.no_codec = args.no_persistence = args.no_metrics = True
    if args.only_metrics:
        args.no_overload = args.no_codec = args.no_persistence = args.no_start = True
    if args.start_runs < 1:
        ap.error("--start-runs must be at least 1")
    work = tempfile.mkdtemp(prefix="gtpcp-bench-")
    try:
        if args.only_start:
            log(f"gtpcp bench: {os.cpu_count()} CPUs, group of {args.workers} worker(s), start phase alone")
            top, result = None, {}
        elif args.only_metrics:
            log(f"gtpcp bench: {os.cpu_count()} CPUs, metrics phase alone")
            top, result = args.top, {}
        elif args.top is None:
            log(f"gtpcp bench: {os.cpu_count()} CPUs, group of {args.workers} worker(s), modify-only, "
                f"{args.subscribers} subscribers, {args.duration:.0f} s per step")
            top, result = datapath(args, work)
        else:
            log(f"gtpcp bench: {os.cpu_count()} CPUs, group of {args.workers} worker(s), modify-only, "
                f"{args.subscribers} subscribers, {args.duration:.0f} s per step")
            top, result = args.top, {}
            log(f"  data path skipped: highest error-free Modify Bearer rate {top} tx/s, as given")
        if not args.no_overload:
            log("")
            result["overload"] = overload(args.bin, work, top, args.duration * 2)
        if not args.no_persistence:
            log("")
            result["persistence"] = persistence(args.bin, work, top, args.duration, args.subscribers)
        if not args.no_start:
            result["start"] = start_phase(args.bin, work, args.start_runs, args.workers)
        if not args.no_metrics:
            log("")
            rate = args.rate_for_metrics or (top // 2 if top else 10000)
            result["metrics"] = bench_metrics.run(args.bin, os.path.join(work, "metrics"), sys.modules[__name__],
                                                  rate, args.duration)
        path = os.path.join(ROOT, "build", "bench-datapath.json")
        if (args.top is not None or args.only_start or args.only_metrics) and os.path.exists(path):
            # A run without the data path replaces only the figures it measured.
            with open(path) as f:
                result = {**json.load(f), **result}
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if not args.no_codec:
        log("")
        micro_benchmark(args.bin, "gtpcp-bench-codec", "codec (Google Benchmark, median of 5):")
        micro_benchmark(args.bin, "gtpcp-bench-worker", "worker procedures alone, per Modify Bearer transaction "
                        "(request and response; Google Benchmark, median of 5):")


def micro_benchmark(bin_dir, program, title):
    """Runs a Google Benchmark program and prints the median of each benchmark."""
    log(f"  {title}")
    r = subprocess.run([os.path.join(bin_dir, program), "--benchmark_repetitions=5",
                        "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                       capture_output=True, text=True, timeout=300)
    for b in json.loads(r.stdout)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            log(f"    {b['run_name']:<42} {b['real_time']:8.1f} ns")

if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        print(f"gtpcp bench: {e}", file=sys.stderr)
        sys.exit(1)
