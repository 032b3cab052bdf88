#!/usr/bin/python3
"""Scenario 1, session life: Echo, then Create Session, Modify Bearer and
Delete Session between a scapy SGW and a scapy PGW through gtpcp, every
message checked on arrival (TEIDs, sequence numbers, control-plane F-TEIDs
naming the proxy, user-plane F-TEIDs and every other IE unchanged), the
session count checked in `gtpcp status --json`, the traffic checked by
tshark. netns_test.py runs the same scenario over IPv6.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import check_eq, run_scenario  # noqa: E402
from s5 import Rig  # noqa: E402

EXPECTED_TYPES = [m.ECHO_REQ, m.ECHO_RSP, m.CS_REQ, m.CS_RSP, m.MB_REQ, m.MB_RSP, m.DS_REQ, m.DS_RSP]


def session_life(run, name, net=None):
    """Scenario 1 on `net` (None: a free 127.77.X.0/24)."""
    rig = Rig(run, name, net)
    net = rig.net
    rig.echo()
    s = rig.create_session()
    check_eq(rig.group.wait_sessions(1), 1, "sessions in gtpcp status --json after Create Session")

    # Modify Bearer: the SGW's new user-plane F-TEID (S5/S8-U SGW,
    # instance 1 in the Bearer Context) reaches the PGW unchanged.
    seq = rig.seq(rig.sgw)
    new_u = s.sgw_teid_u + 1
    got, _, _ = rig.relay(rig.sgw, m.MB_REQ, seq,
                          [m.bearer_context([m.ebi(s.ebi), m.fteid(1, m.S5_SGW_U, new_u, net.sgw)])],
                          s.to_pgw, s.pgw_teid_c, what="Modify Bearer Request")
    rig.check_user_fteid(got, 1, m.S5_SGW_U, new_u, net.sgw, "Modify Bearer Request at the PGW")
    rig.relay(rig.pgw, m.MB_RSP, got.seq,
              [m.cause(m.CAUSE_ACCEPTED), m.bearer_context([m.ebi(s.ebi), m.cause(m.CAUSE_ACCEPTED)])],
              s.to_sgw, s.sgw_teid_c, seq, what="Modify Bearer Response")
    run.step("Modify Bearer: relayed both ways")

    rig.delete_session(s)
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(lambda run: session_life(run, "life"), "scapy scenario 1: session life (IPv4)")
