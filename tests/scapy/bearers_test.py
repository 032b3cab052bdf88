#!/usr/bin/python3
"""Scenario 2, PGW-initiated bearer procedures: on an established session
the PGW creates, updates and deletes a dedicated bearer (EBI 6). Each
request goes to the proxy's gateway-leg TEID and must reach the SGW with
the SGW's TEID and a sequence number of the proxy's; each SGW response must
reach the PGW with the PGW's TEID and the PGW's own sequence number.
Deleting the dedicated bearer leaves the session; Delete Session ends it.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import check, check_eq, run_scenario  # noqa: E402
from s5 import Rig  # noqa: E402

DEDICATED = 6
EXPECTED_TYPES = [m.CS_REQ, m.CS_RSP, m.CB_REQ, m.CB_RSP, m.UB_REQ, m.UB_RSP, m.DB_REQ, m.DB_RSP,
                  m.DS_REQ, m.DS_RSP]


def pgw_initiated(rig, s, request_type, request_ies, response_type, response_ies, what):
    """The PGW's request to the SGW and the SGW's answer back."""
    pgw_seq = rig.seq(rig.pgw)
    got, _, _ = rig.relay(rig.pgw, request_type, pgw_seq, request_ies, s.to_sgw, s.sgw_teid_c, what=what + " Request")
    check(got.seq != pgw_seq and not got.seq & m.COMMAND_BIT,
          "%s Request: the SGW got sequence number 0x%06x, expected one of the proxy's (not the PGW's 0x%06x, "
          "no command bit)" % (what, got.seq, pgw_seq))
    rig.relay(rig.sgw, response_type, got.seq, response_ies, s.to_pgw, s.pgw_teid_c, pgw_seq, what=what + " Response")
    rig.run.step("%s: PGW seq 0x%06x -> SGW seq 0x%06x, answered" % (what, pgw_seq, got.seq))
    return got


def scenario(run):
    rig = Rig(run, "bearers")
    net = rig.net
    s = rig.create_session()
    accepted = m.cause(m.CAUSE_ACCEPTED)
    sgw_u, pgw_u = 0x5C0000BB, 0x9E0000BB

    # Create Bearer: the PGW offers EBI 0 (the MME assigns it); the SGW's
    # answer names EBI 6 and both user-plane endpoints.
    got = pgw_initiated(
        rig, s, m.CB_REQ,
        [m.ebi(s.ebi), m.bearer_context([m.ebi(0), m.tft(), m.fteid(1, m.S5_PGW_U, pgw_u, net.pgw), m.qos(1, 2),
                                         m.g.IE_ChargingID(ChargingID=0x66)])],
        m.CB_RSP,
        [accepted, m.bearer_context([m.ebi(DEDICATED), accepted, m.fteid(2, m.S5_SGW_U, sgw_u, net.sgw),
                                     m.fteid(3, m.S5_PGW_U, pgw_u, net.pgw)])],
        "Create Bearer")
    rig.check_user_fteid(got, 1, m.S5_PGW_U, pgw_u, net.pgw, "Create Bearer Request at the SGW")

    pgw_initiated(rig, s, m.UB_REQ,
                  [m.bearer_context([m.ebi(DEDICATED), m.tft(), m.qos(1, 3)]), m.ambr(300000, 600000)],
                  m.UB_RSP, [accepted, m.bearer_context([m.ebi(DEDICATED), accepted])], "Update Bearer")

    pgw_initiated(rig, s, m.DB_REQ, [m.ebi(DEDICATED, instance=1)],
                  m.DB_RSP, [accepted, m.bearer_context([m.ebi(DEDICATED), accepted])], "Delete Bearer")
    check_eq(rig.group.wait_sessions(1), 1, "sessions after deleting the dedicated bearer (the default one stays)")

    rig.delete_session(s)
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(scenario, "scapy scenario 2: Create, Update, Delete Bearer from the PGW")
