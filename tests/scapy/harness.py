"""What every scapy scenario shares: the command line, the overall time
limit, scapy peers on UDP sockets, the tshark capture and its check, and
failing with one clear message.

A scenario is a function taking a Run. run_scenario() parses --bin, gives
the scenario a work directory, arms an overall timeout (SIGALRM) and turns
SIGTERM into a failure, so that every cleanup registered with
Run.on_exit() happens whatever way the scenario ends: groups are stopped,
tshark is stopped, sockets are closed. The first failed check ends the
scenario with exit status 1 and its message; the group's logs follow.
"""
import argparse
import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from group import Group, GroupError  # noqa: E402

GTPC_PORT = 2123
REPLY_TIMEOUT = 3.0     # a relayed message arrives within this (loopback, even on a loaded host)
QUIET_TIME = 1.0        # how long "nothing arrives" is watched


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def _show(value):
    return "0x%x" % value if isinstance(value, int) and not isinstance(value, bool) else repr(value)


def check_eq(actual, expected, what):
    if actual != expected:
        raise Failure("%s: got %s, expected %s" % (what, _show(actual), _show(expected)))


def family_of(address):
    return socket.AF_INET6 if m.is_v6(address) else socket.AF_INET


class Peer:
    """A scapy SGW or PGW: one UDP socket on address:2123, where the proxy
    sends it requests and answers. Every read has a timeout."""

    def __init__(self, run, role, address):
        self.role = role
        self.address = address
        self.sock = socket.socket(family_of(address), socket.SOCK_DGRAM)
        self.sock.bind((address, GTPC_PORT))
        run.on_exit(self.sock.close)

    def send(self, data, address, port=GTPC_PORT):
        self.sock.sendto(data, (address, port))

    def receive(self, expected_type, what, timeout=REPLY_TIMEOUT):
        """The next datagram: (parsed message, bytes, source). Fails when
        nothing arrives in time or the message is of another type."""
        self.sock.settimeout(timeout)
        try:
            data, source = self.sock.recvfrom(65535)
        except socket.timeout:
            raise Failure("%s: the %s received nothing within %.1f s (expected %s)" %
                          (what, self.role, timeout, m.name(expected_type)))
        source = source[:2]  # an IPv6 source also has flow info and scope
        msg = m.parse(data)
        if msg.gtp_type != expected_type:
            extra = ", cause %s" % m.cause_of(msg) if m.cause_of(msg) is not None else ""
            raise Failure("%s: the %s received %s%s from %s, expected %s" %
                          (what, self.role, m.name(msg.gtp_type), extra, source[0], m.name(expected_type)))
        return msg, data, source

    def pending(self):
        """A datagram that is already waiting, parsed, or None."""
        ready, _, _ = select.select([self.sock], [], [], 0)
        if not ready:
            return None
        data, source = self.sock.recvfrom(65535)
        return m.parse(data), data, source[:2]

    def expect_quiet(self, what, seconds=QUIET_TIME):
        """Fails when anything arrives within `seconds`."""
        self.sock.settimeout(seconds)
        try:
            data, source = self.sock.recvfrom(65535)
        except socket.timeout:
            return
        raise Failure("%s: the %s received %s from %s, expected nothing" %
                      (what, self.role, m.name(m.parse(data).gtp_type), source[0]))


class Capture:
    """tshark on an interface, from before the scenario's first message to
    after its last. Live once a marker (an Echo exchange with the proxy
    from a socket of its own) is in the file; complete once the end marker
    is."""

    MARKER_SEQ = 0x7A0000

    def __init__(self, run, proxy_address, marker_address, bpf, interface="lo"):
        self.run = run
        self.proxy = proxy_address
        self.pcap = os.path.join(run.workdir, "capture.pcapng")
        self.log_path = os.path.join(run.workdir, "tshark.log")
        self.tshark = shutil.which("tshark")
        check(self.tshark is not None, "tshark is not installed (Debian package tshark)")
        self.marker = socket.socket(family_of(marker_address), socket.SOCK_DGRAM)
        self.marker.bind((marker_address, 0))
        run.on_exit(self.marker.close)
        self.seq = self.MARKER_SEQ
        self.log = open(self.log_path, "w")
        run.on_exit(self.log.close)
        self.proc = subprocess.Popen([self.tshark, "-i", interface, "-f", bpf, "-B", "16", "-w", self.pcap,
                                      "-a", "duration:110", "-q"], stdout=self.log, stderr=subprocess.STDOUT)
        run.on_exit(self._kill)
        live = self._mark(40.0)
        check(live, "tshark did not start capturing within 40 s:\n" + self._log_text())

    def _log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def _echo(self):
        self.seq += 1
        self.marker.sendto(m.message(m.ECHO_REQ, self.seq, [m.recovery(1)]), (self.proxy, GTPC_PORT))
        self.marker.settimeout(1.0)
        try:
            data, _ = self.marker.recvfrom(65535)
        except socket.timeout:
            return False
        return m.parse(data).seq == self.seq

    def _seen(self, first, last):
        # Any answer of this round will do: dumpcap writes its file in
        # batches, and the answer just sent may not be there yet when an
        # earlier one is. The file being written usually ends inside a
        # frame: tshark then fails, after printing every complete frame.
        out = self.read("gtpv2.message_type == 2 && gtpv2.seq >= %d && gtpv2.seq <= %d" % (first, last),
                        ["frame.number"], partial=True)
        return bool(out and out.strip())

    def _mark(self, seconds):
        """Echo exchanges until one of them is in the capture file: then
        everything sent before the first is in it too."""
        deadline = time.monotonic() + seconds
        first = self.seq + 1
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if self._echo() and self._seen(first, self.seq):
                return True
            time.sleep(0.2)
        return False

    def read(self, display_filter, fields, partial=False):
        """tshark's fields of the frames matching `display_filter`, one line a
        frame ("," between repeated values); None when tshark fails, unless
        `partial` (what it printed before failing)."""
        argv = [self.tshark, "-r", self.pcap, "-Y", display_filter, "-T", "fields", "-E", "separator=/t",
                "-E", "occurrence=a", "-E", "aggregator=,"]
        for f in fields:
            argv += ["-e", f]
        try:
            out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return None
        return out.stdout if out.returncode == 0 or partial else None

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def finish(self, expected_types):
        """Ends the capture after an end marker, then checks it: no malformed
        frame, no expert item of error severity, and every message type of
        `expected_types` decoded by tshark at least once."""
        check(self._mark(40.0), "the end marker never reached the capture within 40 s")
        self._kill()
        self.run.step("capture: %s" % self.pcap)
        bad = self.read("_ws.malformed || _ws.expert.severity >= 8388608",
                        ["frame.number", "_ws.col.Source", "_ws.col.Destination", "_ws.col.Info",
                         "_ws.expert.message"])
        check(bad is not None, "tshark -r %s failed" % self.pcap)
        check(bad.strip() == "", "tshark flags these frames as malformed or with errors:\n" + bad)
        seen = self.read("gtpv2", ["gtpv2.message_type"])
        check(seen is not None, "tshark -r %s failed" % self.pcap)
        types = {int(t) for line in seen.split() for t in line.split(",") if t}
        missing = sorted(set(expected_types) - types)
        check(not missing, "the capture lacks %s (tshark decoded types %s)" %
              (", ".join(m.name(t) for t in missing), sorted(types)))
        self.run.step("tshark: %d GTPv2 frames, no malformed frame, no expert error" % len(seen.split()))


class Run:
    """One run of a scenario: its options, work directory and cleanups."""

    def __init__(self, args, workdir):
        self.args = args
        self.bin_dir = args.bin
        self.workdir = workdir
        self.groups = []
        self._exit = contextlib.ExitStack()
        self._t0 = time.monotonic()

    def on_exit(self, fn):
        self._exit.callback(fn)

    def close(self):
        self._exit.close()

    def step(self, text):
        print("[%6.2f s] %s" % (time.monotonic() - self._t0, text), flush=True)

    def group(self, name, **kw):
        """A started group, stopped when the run ends."""
        g = Group(self.bin_dir, self._subdir("group-" + name), "scapy-%s-%d" % (name, os.getpid()), **kw)
        self.groups.append(g)
        self.on_exit(g.stop)
        g.start()
        self.step("group %s started (%s)" % (g.name, g.config))
        return g

    def peer(self, role, address):
        return Peer(self, role, address)

    def capture(self, proxy_address, marker_address, bpf, interface="lo"):
        return Capture(self, proxy_address, marker_address, bpf, interface)

    def _subdir(self, name):
        d = os.path.join(self.workdir, name)
        os.makedirs(d)
        return d


class _Timeout(Exception):
    pass


def parser(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bin", required=True, help="directory of gtpcp, gtpcp-forwarder and gtpcp-worker")
    ap.add_argument("--timeout", type=float, default=100, help="overall limit in seconds (default 100)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory even when the test passes")
    return ap


def run_scenario(scenario, description, args=None):
    """Runs `scenario(run)` and exits: 0 when it passed, 1 on the first
    failed check (message on stdout), 2 on an unexpected error."""
    if args is None:
        args = parser(description).parse_args()

    def on_alarm(*_):
        raise _Timeout()

    def on_term(*_):
        raise Failure("terminated by SIGTERM")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    signal.alarm(int(args.timeout))
    workdir = tempfile.mkdtemp(prefix="gtpcp-scapy-")
    run = Run(args, workdir)
    status, message = 0, ""
    try:
        run.step("%s (work directory %s)" % (description, workdir))
        scenario(run)
    except Failure as e:
        status, message = 1, "FAIL: %s" % e
    except GroupError as e:
        status, message = 1, "FAIL: group: %s" % e
    except _Timeout:
        status, message = 1, "FAIL: the scenario took longer than %d s" % args.timeout
    except Exception:  # noqa: BLE001  (any other error still stops the group)
        status, message = 2, "ERROR:\n" + traceback.format_exc()
    finally:
        signal.alarm(0)
        if status != 0:
            print(message, flush=True)
            for g in run.groups:
                try:
                    print(g.diagnostics(), flush=True)
                except Exception as e:  # noqa: BLE001
                    print("(diagnostics of %s failed: %s)" % (g.name, e))
        signal.alarm(30)  # bounded cleanup too
        try:
            run.close()
        except _Timeout:
            print("cleanup took longer than 30 s", flush=True)
            status = status or 2
        signal.alarm(0)
    if status == 0:
        run.step("PASS")
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    else:
        print("work directory kept: %s" % workdir, flush=True)
    sys.exit(status)
