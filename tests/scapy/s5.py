"""The S5/S8 rig of the scapy scenarios: a gtpcp group between a scapy SGW
and a scapy PGW, with tshark capturing, and the steps every scenario
shares (creating and deleting a session, relaying a message one way and
checking what came out the other side).

Addresses: each IPv4 run takes a 127.77.X.0/24 of its own (proxy access .1,
proxy gateway .2, SGW .11, PGW .21, capture marker .30), held for the
run's lifetime, so that scenarios, and two trees running the suite, run in
parallel without meeting; the IPv6 scenarios pass addresses of their own
network namespace.
"""
import os
import random
import socket
import sys
from dataclasses import dataclass

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import GTPC_PORT, Failure, check, check_eq  # noqa: E402


def _family(address):
    return "ipv6" if m.is_v6(address) else "ipv4"


@dataclass
class Net:
    access: str    # the proxy's address toward the SGW
    gateway: str   # the proxy's address toward the PGW
    sgw: str
    pgw: str
    marker: str    # the capture's marker socket
    bpf: str       # the capture filter

    @staticmethod
    def v4(x):
        p = "127.77.%d." % x
        return Net(p + "1", p + "2", p + "11", p + "21", p + "30", "udp port 2123 and net %s0/24" % p)


def free_net(run):
    """A 127.77.X.0/24 that no other scapy run holds and whose GTP-C
    addresses are free, held until `run` ends. The hold is an abstract
    Unix socket named after X: the kernel lets one process bind it, and
    releases it when that process ends, however it ends."""
    for x in random.sample(range(1, 255), 254):
        hold = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            hold.bind("\0gtpcp-scapy-127.77.%d" % x)
        except OSError:
            hold.close()
            continue
        net = Net.v4(x)
        if all(_bindable(a) for a in (net.access, net.gateway, net.sgw, net.pgw)):
            run.on_exit(hold.close)
            return net
        hold.close()
    raise Failure("no 127.77.X.0/24 is free")


def _bindable(address):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind((address, GTPC_PORT))
        except OSError:
            return False
    return True


@dataclass
class Session:
    """One PDN connection as each side knows it."""
    sgw_teid_c: int = 0x5C000001
    sgw_teid_u: int = 0x5C0000AA
    pgw_teid_c: int = 0x9E000001
    pgw_teid_u: int = 0x9E0000AA
    ebi: int = 5
    imsi: str = m.IMSI
    csr_extra: tuple = ()    # IEs added to the Create Session Request
    csrsp_extra: tuple = ()  # and to its response
    to_pgw: int = 0   # the proxy's TEID the SGW addresses (access leg)
    to_sgw: int = 0   # the proxy's TEID the PGW addresses (gateway leg)


class Rig:
    """A started group (one PGW in its only pool), the capture, the SGW and
    the PGW. `name` names the group; `net` None: free_net()."""

    def __init__(self, run, name, net=None, recovery=9):
        net = net or free_net(run)
        run.step("addresses: proxy %s (access), %s (gateway), SGW %s, PGW %s" %
                 (net.access, net.gateway, net.sgw, net.pgw))
        self.run = run
        self.net = net
        self.recovery = recovery
        self.group = run.group(name, access={_family(net.access): net.access},
                               gateway={_family(net.gateway): net.gateway},
                               gateways=[("pgw", net.pgw, GTPC_PORT)], recovery=recovery)
        self.sgw = run.peer("SGW", net.sgw)
        self.pgw = run.peer("PGW", net.pgw)
        self.capture = run.capture(net.access, net.marker, net.bpf)
        run.step("capture live")
        self._seq = {"SGW": 0x1000, "PGW": 0x2000}

    def seq(self, peer, command=False):
        """The next sequence number `peer` uses (command: with the top bit)."""
        self._seq[peer.role] += 1
        return self._seq[peer.role] | (m.COMMAND_BIT if command else 0)

    def proxy_of(self, peer):
        """The proxy's address that `peer` talks to."""
        return self.net.access if peer is self.sgw else self.net.gateway

    def other(self, peer):
        return self.pgw if peer is self.sgw else self.sgw

    def relay(self, frm, message_type, seq, ies, teid, expect_teid, expect_seq=None, what=None):
        """`frm` sends a message to the proxy; the other peer must receive it
        from the proxy's address of its leg, port 2123, with header TEID
        `expect_teid`, sequence number `expect_seq` (None: any, returned),
        and nothing else changed but control-plane F-TEIDs.
        Returns (parsed, bytes sent, bytes received)."""
        what = what or m.name(message_type)
        to = self.other(frm)
        sent = m.message(message_type, seq, ies, teid=teid)
        frm.send(sent, self.proxy_of(frm))
        got, data = self.arrival(frm, to, message_type, sent, what)
        check_eq(got.T, 1, "%s: T flag at the %s" % (what, to.role))
        check_eq(got.teid, expect_teid, "%s: header TEID at the %s" % (what, to.role))
        if expect_seq is not None:
            check_eq(got.seq, expect_seq, "%s: sequence number at the %s" % (what, to.role))
        return got, sent, data

    def arrival(self, frm, to, message_type, sent, what):
        """What `to` received of the message `frm` sent: from the proxy's
        address of its leg, port 2123, changed only in TEIDs and sequence
        number. When nothing comes, says what `frm` got instead (the
        proxy's refusal). Returns (parsed, bytes)."""
        try:
            got, data, source = to.receive(message_type, what)
        except Failure as e:
            late = frm.pending()
            if late is not None:
                raise Failure("%s; the %s got %s with cause %s instead" %
                              (e, frm.role, m.name(late[0].gtp_type), m.cause_of(late[0])))
            raise
        check_eq(source, (self.proxy_of(to), GTPC_PORT), "%s: source of the message the %s received" % (what, to.role))
        problems = m.relay_differences(sent, data, recovery=self.recovery)
        check(not problems, "%s: the %s received a message changed beyond TEIDs and sequence number:\n  %s" %
              (what, to.role, "\n  ".join(problems)))
        return got, data

    def check_control_fteid(self, msg, instance, interface_type, proxy_address, what):
        """The control-plane F-TEID `instance` of `msg` names the proxy at
        `proxy_address` (that family alone) with a TEID it allocated."""
        f = m.fteids(msg).get(instance)
        check(f is not None, "%s: no F-TEID with instance %d" % (what, instance))
        check_eq(f.InterfaceType, interface_type, "%s: F-TEID interface type" % what)
        check_eq(m.address_of(f), proxy_address, "%s: F-TEID address" % what)
        check(f.GRE_Key not in (0, 0xFFFFFFFF), "%s: F-TEID TEID 0x%08x is not one a proxy allocates" %
              (what, f.GRE_Key))
        return f.GRE_Key

    def check_user_fteid(self, msg, instance, interface_type, teid, address, what):
        """The Bearer Context's F-TEID `instance` is the user-plane endpoint as its owner sent it."""
        bcs = m.ies_of(msg, m.g.IE_BearerContext)
        check(bcs, "%s: no Bearer Context" % what)
        found = [f for f in bcs[0].IE_list if isinstance(f, m.g.IE_FTEID) and f.instance == instance]
        check(found, "%s: the Bearer Context has no F-TEID with instance %d" % (what, instance))
        f = found[0]
        check_eq((f.InterfaceType, f.GRE_Key, m.address_of(f)), (interface_type, teid, address),
                 "%s: user-plane F-TEID (interface type, TEID, address)" % what)

    # -- procedures -----------------------------------------------------------

    def echo(self):
        seq = self.seq(self.sgw)
        self.sgw.send(m.message(m.ECHO_REQ, seq, [m.recovery(7)]), self.net.access)
        got, _, source = self.sgw.receive(m.ECHO_RSP, "Echo")
        check_eq(source, (self.net.access, GTPC_PORT), "Echo Response source")
        check_eq(got.T, 0, "Echo Response T flag")
        check_eq(got.seq, seq, "Echo Response sequence number")
        rec = m.ies_of(got, m.g.IE_RecoveryRestart)
        check(rec, "Echo Response without Recovery IE")
        check_eq(rec[0].restart_counter, self.recovery, "Echo Response Recovery (gtpc.recovery)")
        self.run.step("Echo: answered with Recovery %d" % self.recovery)

    def create_session(self, s=None):
        """Create Session Request from the SGW and the PGW's accepting answer,
        with every check of the creation. Returns the Session."""
        s = s or Session()
        net = self.net
        seq = self.seq(self.sgw)
        req = m.create_session_request(seq, net.sgw, s.sgw_teid_c, s.sgw_teid_u, s.ebi, s.imsi, s.csr_extra)
        self.sgw.send(req, net.access)
        got, _ = self.arrival(self.sgw, self.pgw, m.CS_REQ, req, "Create Session Request")
        what = "Create Session Request at the PGW"
        check_eq((got.T, got.teid), (1, 0), what + ": (T flag, header TEID)")
        s.to_sgw = self.check_control_fteid(got, 0, m.S5_SGW_C, net.gateway, what + ", sender F-TEID")
        self.check_user_fteid(got, 2, m.S5_SGW_U, s.sgw_teid_u, net.sgw, what)
        self.run.step("CSR reached the PGW: seq 0x%06x, sender F-TEID %s TEID 0x%08x" %
                      (got.seq, net.gateway, s.to_sgw))

        rsp = m.create_session_response(got.seq, s.to_sgw, net.pgw, s.pgw_teid_c, s.pgw_teid_u, s.ebi,
                                        s.csrsp_extra)
        self.pgw.send(rsp, net.gateway)
        got, _ = self.arrival(self.pgw, self.sgw, m.CS_RSP, rsp, "Create Session Response")
        what = "Create Session Response at the SGW"
        check_eq(got.seq, seq, what + ": sequence number")
        check_eq(got.teid, s.sgw_teid_c, what + ": header TEID")
        check_eq(m.cause_of(got), m.CAUSE_ACCEPTED, what + ": cause")
        s.to_pgw = self.check_control_fteid(got, 1, m.S5_PGW_C, net.access, what + ", PGW F-TEID")
        self.check_user_fteid(got, 2, m.S5_PGW_U, s.pgw_teid_u, net.pgw, what)
        self.run.step("CSResp reached the SGW: PGW F-TEID %s TEID 0x%08x" % (net.access, s.to_pgw))
        return s

    def delete_session(self, s):
        """Delete Session Request and Response; then no session is left."""
        seq = self.seq(self.sgw)
        got, _, _ = self.relay(self.sgw, m.DS_REQ, seq, [m.ebi(s.ebi)], s.to_pgw, s.pgw_teid_c,
                               what="Delete Session Request")
        self.relay(self.pgw, m.DS_RSP, got.seq, [m.cause(m.CAUSE_ACCEPTED)], s.to_sgw, s.sgw_teid_c, seq,
                   what="Delete Session Response")
        self.run.step("Delete Session: relayed both ways")
        check_eq(self.group.wait_sessions(0), 0, "sessions in gtpcp status --json after Delete Session")
