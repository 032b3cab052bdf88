"""A gtpcp group run by a scapy test: the Python twin of
tests/support/test_group.cc.

Group writes gtpcp.yaml and routing.yaml into a directory of the test's
own, starts the group with `gtpcp -c gtpcp.yaml start`, reads
`gtpcp status --json`, and stops it with `gtpcp stop`. stop() is
idempotent and, should `gtpcp stop` leave one of the group's processes
behind, kills that process by the PID the group itself reported (after
checking the PID still runs a gtpcp binary): it never touches a process it
did not start. Use it as a context manager so that the group is stopped
whatever happens.
"""
import json
import os
import signal
import subprocess
import time


class GroupError(Exception):
    pass


def _yaml_address(address):
    return '"%s"' % address


def _address_block(indent, addresses):
    return "".join("%s%s: %s\n" % (indent, family, _yaml_address(a)) for family, a in sorted(addresses.items()))


class Group:
    """One gtpcp group.

    bin_dir: the directory of gtpcp, gtpcp-forwarder and gtpcp-worker.
    workdir: a directory of the test's own; the group's files go there.
    name: the group name (unique per test: it names shared memory).
    access, gateway: {"ipv4": ..., "ipv6": ...}, the proxy's addresses
      toward SGWs and PGWs (gateway None: the access addresses).
    gateways: [(name, address, port)] of the one pool every session uses.
    health_check_ms: the routing document's health_check.interval_ms (0: no
      Echo to the gateways).
    """

    def __init__(self, bin_dir, workdir, name, access, gateway=None, gateways=(), workers=2, recovery=1,
                 health_check_ms=0):
        self.bin_dir = bin_dir
        self.gtpcp = os.path.join(bin_dir, "gtpcp")
        self.dir = workdir
        self.name = name
        self.run_dir = os.path.join(workdir, "run")
        self.config = os.path.join(workdir, "gtpcp.yaml")
        self.workers = workers
        self.log = []          # what the launcher said, for diagnostics()
        self._pids = {}        # process name -> pid, as `gtpcp status` reported them
        self._started = False
        y = ["group: %s" % name, "run_dir: %s" % self.run_dir, "workers: %d" % workers,
             "routing: routing.yaml", "gtpc:", "  recovery: %d" % recovery, "  access:"]
        text = "\n".join(y) + "\n" + _address_block("    ", access)
        if gateway is not None:
            text += "  gateway:\n" + _address_block("    ", gateway)
        # No Redis: scenarios run side by side, and check the relaying alone.
        text += "storage:\n  mode: off\n"
        # gtpcp-console on the group's own loopback address, or none.
        text += "management:\n  listen: [%s]\n" % ('"%s:9123"' % access["ipv4"] if "ipv4" in access else "")
        with open(self.config, "w") as f:
            f.write(text)
        r = ["version: 1", "pools:", "  internet:", "    gateways:"]
        for gw_name, address, port in gateways:
            r.append("      - {name: %s, address: %s, port: %d}" % (gw_name, _yaml_address(address), port))
        r += ["rules:", "  - {name: default, pool: internet}", "health_check: {interval_ms: %d}" % health_check_ms]
        with open(os.path.join(workdir, "routing.yaml"), "w") as f:
            f.write("\n".join(r) + "\n")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _run(self, *args, timeout=30):
        try:
            out = subprocess.run([self.gtpcp, "-c", self.config] + list(args), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=timeout, text=True)
        except subprocess.TimeoutExpired:
            raise GroupError("gtpcp %s did not finish within %d s" % (" ".join(args), timeout))
        self.log.append("$ gtpcp %s (exit %d)\n%s" % (" ".join(args), out.returncode, out.stdout))
        return out

    def start(self):
        """Starts the group; raises GroupError unless every process serves."""
        self._started = True
        out = self._run("start")
        if out.returncode != 0:
            raise GroupError("gtpcp start failed (exit %d):\n%s" % (out.returncode, out.stdout))
        for p in self.status()["processes"]:
            if isinstance(p.get("pid"), int):
                self._pids[p["name"]] = p["pid"]

    def status(self):
        """`gtpcp status --json`, parsed."""
        out = self._run("status", "--json", timeout=10)
        if out.returncode != 0:
            raise GroupError("gtpcp status --json failed (exit %d): %s" % (out.returncode, out.stdout))
        self.log.pop()  # too long to keep each one
        return json.loads(out.stdout)

    def sessions(self):
        return self.status()["sessions"]

    def counter(self, name):
        """A forwarder counter ("forwarder.x") or the sum of a worker
        counter ("worker.x") over the workers."""
        s = self.status()
        if name.startswith("forwarder."):
            return s["counters"].get(name, 0)
        return sum(p.get("counters", {}).get(name, 0) for p in s["processes"])

    def wait_sessions(self, expected, seconds=3.0):
        """Polls `status` until it shows `expected` sessions; the count seen last."""
        deadline = time.monotonic() + seconds
        while True:
            n = self.sessions()
            if n == expected or time.monotonic() > deadline:
                return n
            time.sleep(0.05)

    def stop(self):
        if not self._started:
            return
        self._started = False
        try:
            self._run("stop")
        except GroupError as e:
            self.log.append(str(e))
        for proc, pid in self._pids.items():
            if _runs_gtpcp(pid):
                self.log.append("%s (pid %d) survived gtpcp stop: SIGKILL" % (proc, pid))
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def diagnostics(self):
        """Launcher output and the tail of every process log."""
        out = ["---- group %s (%s)" % (self.name, self.config)] + self.log
        names = ["forwarder"] + ["worker-%d" % i for i in range(self.workers)]
        for n in names:
            path = os.path.join(self.run_dir, n + ".log")
            try:
                with open(path, errors="replace") as f:
                    lines = f.readlines()[-40:]
            except OSError as e:
                lines = ["(%s)\n" % e]
            out.append("---- %s (last %d lines)\n%s" % (path, len(lines), "".join(lines)))
        return "\n".join(out)


def _runs_gtpcp(pid):
    """True when `pid` is alive and runs one of the gtpcp binaries (a PID the
    kernel gave to another program since is left alone)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv0 = f.read().split(b"\0")[0]
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return os.path.basename(argv0).startswith(b"gtpcp") and state != "Z"
