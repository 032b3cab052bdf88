"""What `gtpcp bench`'s start phase sends and times: GTPv2-C requests packed
by hand (TS 29.274), and a prober that launches a command and sends its
requests every millisecond from that moment, so that what it measures is
launch to first answer, whatever the command does before it exits.

Only the IEs the proxy and the emulated PGW need are built: a Create Session
Request like the emulator's (tools/peer/messages.cc), a Modify Bearer
Request for a session created earlier, an Echo Request. Responses are read
for their header, top-level Cause and control-plane F-TEIDs, nothing more.
"""
import select
import socket
import struct
import subprocess
import time

GTPC_PORT = 2123

ECHO_REQUEST, ECHO_RESPONSE = 1, 2
CREATE_SESSION_REQUEST, CREATE_SESSION_RESPONSE = 32, 33
MODIFY_BEARER_REQUEST, MODIFY_BEARER_RESPONSE = 34, 35

IE_IMSI, IE_CAUSE, IE_RECOVERY, IE_APN, IE_AMBR, IE_EBI = 1, 2, 3, 71, 72, 73
IE_MSISDN, IE_PAA, IE_BEARER_QOS, IE_RAT, IE_SERVING_NETWORK = 76, 79, 80, 82, 83
IE_ULI, IE_FTEID, IE_BEARER_CONTEXT, IE_PDN_TYPE, IE_SELECTION_MODE = 86, 87, 93, 99, 128

CAUSE_ACCEPTED = 16
IF_SGW_GTPU, IF_SGW_GTPC, IF_PGW_GTPC = 4, 6, 7  # S5/S8 F-TEID interface types
PLMN_00101 = bytes([0x00, 0xF1, 0x10])  # MCC 001, MNC 01 (TS 24.008 10.5.1.13)
EBI = 5


def _ie(ie_type, value, instance=0):
    return struct.pack("!BHB", ie_type, len(value), instance & 0x0F) + value


def _tbcd(digits):
    if len(digits) % 2:
        digits += "f"
    return bytes(int(digits[i], 16) | int(digits[i + 1], 16) << 4 for i in range(0, len(digits), 2))


def _fteid(interface, teid, ipv4, instance):
    return _ie(IE_FTEID, struct.pack("!BI", 0x80 | interface, teid) + socket.inet_aton(ipv4), instance)


def _message(msg_type, sequence, ies, teid=None):
    body = b"".join(ies)
    if teid is None:
        return struct.pack("!BBH", 0x40, msg_type, len(body) + 4) + struct.pack("!I", sequence << 8) + body
    return struct.pack("!BBHI", 0x48, msg_type, len(body) + 8, teid) + struct.pack("!I", sequence << 8) + body


def _uli():
    # TAI and ECGI.
    return _ie(IE_ULI, bytes([0x18]) + PLMN_00101 + struct.pack("!H", 1) + PLMN_00101 + struct.pack("!I", 0x101))


def _user_plane_teid(imsi):
    return 0x40000000 | (imsi & 0x3FFFFFFF)


def echo_request(sequence, recovery=1):
    return _message(ECHO_REQUEST, sequence, [_ie(IE_RECOVERY, bytes([recovery]))])


def create_session_request(sequence, imsi, sgw, sgw_teid, apn="internet"):
    """An initial attach over S5/S8 (TEID 0), default bearer EBI 5."""
    qos = bytes([0x40 | 15 << 2 | 0x01, 9]) + bytes(20)  # PCI, PL 15, PVI, QCI 9, no bit rates
    bearer = _ie(IE_EBI, bytes([EBI])) + _ie(IE_BEARER_QOS, qos) + \
        _fteid(IF_SGW_GTPU, _user_plane_teid(imsi), sgw, 2)
    apn_labels = b"".join(bytes([len(label)]) + label.encode() for label in apn.split("."))
    return _message(CREATE_SESSION_REQUEST, sequence, [
        _ie(IE_IMSI, _tbcd(f"{imsi:015d}")),
        _ie(IE_MSISDN, _tbcd(f"1555{imsi % 10000000:07d}")),
        _uli(),
        _ie(IE_SERVING_NETWORK, PLMN_00101),
        _ie(IE_RAT, bytes([6])),  # E-UTRAN
        _fteid(IF_SGW_GTPC, sgw_teid, sgw, 0),
        _ie(IE_APN, apn_labels),
        _ie(IE_SELECTION_MODE, bytes([0])),
        _ie(IE_PDN_TYPE, bytes([1])),
        _ie(IE_PAA, bytes([1, 0, 0, 0, 0])),
        _ie(IE_AMBR, struct.pack("!II", 50000, 100000)),
        _ie(IE_BEARER_CONTEXT, bearer),
        _ie(IE_RECOVERY, bytes([1])),
    ], teid=0)


def modify_bearer_request(sequence, proxy_teid, imsi, sgw):
    """A Modify Bearer Request of an established session: `proxy_teid` is the
    control TEID the proxy gave the SGW in its Create Session Response."""
    bearer = _ie(IE_EBI, bytes([EBI])) + _fteid(IF_SGW_GTPU, _user_plane_teid(imsi), sgw, 1)
    return _message(MODIFY_BEARER_REQUEST, sequence, [_uli(), _ie(IE_RAT, bytes([6])),
                                                      _ie(IE_BEARER_CONTEXT, bearer)], teid=proxy_teid)


def decode(data):
    """(type, teid or None, sequence, cause or None, {interface type: teid}
    of the top-level F-TEIDs), or None for what is not a GTPv2-C message."""
    if len(data) < 8 or data[0] >> 5 != 2:
        return None
    msg_type, length = data[1], struct.unpack_from("!H", data, 2)[0]
    end = min(len(data), 4 + length)
    if data[0] & 0x08:
        if len(data) < 12:
            return None
        teid, sequence, at = struct.unpack_from("!I", data, 4)[0], struct.unpack_from("!I", data, 8)[0] >> 8, 12
    else:
        teid, sequence, at = None, struct.unpack_from("!I", data, 4)[0] >> 8, 8
    cause, fteids = None, {}
    while at + 4 <= end:
        ie_type, ie_len = data[at], struct.unpack_from("!H", data, at + 1)[0]
        value = data[at + 4:at + 4 + ie_len]
        if ie_type == IE_CAUSE and value and cause is None:
            cause = value[0]
        elif ie_type == IE_FTEID and len(value) >= 5:
            fteids.setdefault(value[0] & 0x3F, struct.unpack_from("!I", value, 1)[0])
        at += 4 + ie_len
    return msg_type, teid, sequence, cause, fteids


class Probe:
    """One request sent again and again from its own socket until it is
    answered with an acceptance. An answer that refuses it (a creation
    refused while the group starts, a session not found) is counted, and
    the request goes on with a new sequence number, as a peer's next attempt
    would. `build(sequence)` gives the request's bytes."""

    def __init__(self, name, source, build, response_type, sequence):
        self.name, self.build, self.response_type = name, build, response_type
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((source, 0))
        self.sock.setblocking(False)
        self.sequence = sequence
        self.request = build(sequence)
        self.sent = 0
        self.refused = []      # causes of the answers that were not acceptances
        self.answered = None   # seconds from the launch to the first acceptance
        self.answer = None     # that answer, decoded

    def send(self, to):
        try:
            self.sock.sendto(self.request, to)
            self.sent += 1
        except OSError:
            pass  # nothing bound there yet: the kernel may say so

    def receive(self, at):
        """Reads what the socket holds; `at`: seconds from the launch."""
        for _ in range(4096):  # bounded: a socket that keeps failing ends the read
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                continue  # an ICMP error reported on the socket
            d = decode(data)
            if d is None or d[0] != self.response_type or d[2] != self.sequence or self.answered is not None:
                continue
            if d[3] is None or d[3] == CAUSE_ACCEPTED or self.response_type == ECHO_RESPONSE:
                self.answered, self.answer = at, d
            else:
                self.refused.append(d[3])
                self.sequence = (self.sequence + 1) & 0x7FFFFF
                self.request = self.build(self.sequence)

    def close(self):
        self.sock.close()


def launch_and_probe(command, probes, proxy, log_path, interval=0.001, timeout=10.0):
    """Runs `command` and, from the moment it is launched, sends each probe's
    request to `proxy` every `interval` seconds until it is answered. Bounded
    by `timeout` seconds (at most timeout / interval sends per probe).

    Returns (seconds from the launch to the command's exit or None if it
    still ran at the timeout, its exit status). Each probe keeps the seconds
    from the launch to its first acceptance in `answered` (None: none). The
    command's output goes to `log_path`. The times have the resolution of
    `interval`: the loop sleeps in select() between sends."""
    to = (proxy, GTPC_PORT)
    by_fd = {p.sock.fileno(): p for p in probes}
    with open(log_path, "w") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        exited, status, next_send = None, None, t0
        try:
            while True:
                now = time.monotonic()
                if exited is None and proc.poll() is not None:
                    exited, status = now - t0, proc.returncode
                waiting = [p for p in probes if p.answered is None]
                if (exited is not None and not waiting) or now - t0 > timeout:
                    break
                if exited is not None and status != 0:
                    break  # the start failed: nothing will answer
                if now >= next_send:
                    for p in waiting:
                        p.send(to)
                    next_send = max(next_send + interval, now)
                ready, _, _ = select.select(list(by_fd), [], [], max(0.0, min(next_send - now, interval)))
                at = time.monotonic() - t0
                for fd in ready:
                    by_fd[fd].receive(at)
        finally:
            if exited is None:
                try:
                    proc.wait(timeout=max(1.0, timeout))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                status = proc.returncode
    return exited, status


def exchange(probe, address, timeout, interval=0.01):
    """Sends `probe`'s request to `address` every `interval` seconds until it
    is accepted or `timeout` seconds have passed. Whether it was."""
    deadline = time.monotonic() + timeout
    while probe.answered is None and time.monotonic() < deadline:
        probe.send((address, GTPC_PORT))
        if select.select([probe.sock], [], [], interval)[0]:
            probe.receive(0.0)
    return probe.answered is not None
