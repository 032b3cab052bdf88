#!/usr/bin/python3
"""Scenario 5, SGW notifications on S5/S8: Change Notification Request,
Suspend Notification and Resume Notification reach the PGW with the PGW's
TEID and a sequence number of the proxy's, their IEs unchanged; the PGW's
Change Notification Response, Suspend Acknowledge and Resume Acknowledge
reach the SGW with the SGW's TEID and its own sequence number.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import check, run_scenario  # noqa: E402
from s5 import Rig  # noqa: E402

EXPECTED_TYPES = [m.CS_REQ, m.CS_RSP, m.CN_REQ, m.CN_RSP, m.SUSPEND_NOTIF, m.SUSPEND_ACK, m.RESUME_NOTIF,
                  m.RESUME_ACK, m.DS_REQ, m.DS_RSP]


def scenario(run):
    rig = Rig(run, "notify")
    s = rig.create_session()
    accepted = m.cause(m.CAUSE_ACCEPTED)
    procedures = [
        (m.CN_REQ, [m.imsi(), m.rat(6), m.uli(tac=2, eci=0x7654321)], m.CN_RSP, [m.imsi(), accepted]),
        (m.SUSPEND_NOTIF, [m.ebi(s.ebi)], m.SUSPEND_ACK, [accepted]),
        (m.RESUME_NOTIF, [m.imsi(), m.ebi(s.ebi)], m.RESUME_ACK, [accepted]),
    ]
    for request, request_ies, response, response_ies in procedures:
        seq = rig.seq(rig.sgw)
        got, _, _ = rig.relay(rig.sgw, request, seq, request_ies, s.to_pgw, s.pgw_teid_c)
        check(got.seq != seq, "%s: the PGW got the SGW's own sequence number 0x%06x" % (m.name(request), seq))
        rig.relay(rig.pgw, response, got.seq, response_ies, s.to_sgw, s.sgw_teid_c, seq)
        run.step("%s and %s relayed (SGW seq 0x%06x, PGW seq 0x%06x)" % (m.name(request), m.name(response), seq,
                                                                          got.seq))
    rig.delete_session(s)
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(scenario, "scapy scenario 5: Change, Suspend and Resume Notification")
