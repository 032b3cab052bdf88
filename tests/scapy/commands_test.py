#!/usr/bin/python3
"""Scenario 3, SGW commands (TS 29.274 7.2.14, 7.2.17, 7.6):

- Modify Bearer Command from the SGW with a sequence number carrying the
  top bit reaches the PGW with a top-bit number of the proxy's; the PGW's
  Update Bearer Request carrying that number reaches the SGW with the
  number of the SGW's command; the SGW's Update Bearer Response reaches the
  PGW with the PGW's number.
- Delete Bearer Command, refused by the PGW with a Delete Bearer Failure
  Indication: the SGW gets the indication with its command's number.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import check, check_eq, run_scenario  # noqa: E402
from s5 import Rig  # noqa: E402

EXPECTED_TYPES = [m.CS_REQ, m.CS_RSP, m.MB_CMD, m.UB_REQ, m.UB_RSP, m.DB_CMD, m.DB_FAIL, m.DS_REQ, m.DS_RSP]


def command_at_pgw(rig, s, command_type, ies, what):
    """The SGW's command, relayed to the PGW; returns (SGW's number, PGW's)."""
    sgw_seq = rig.seq(rig.sgw, command=True)
    got, _, _ = rig.relay(rig.sgw, command_type, sgw_seq, ies, s.to_pgw, s.pgw_teid_c, what=what)
    check(got.seq & m.COMMAND_BIT, "%s: the PGW got sequence number 0x%06x without the command bit" % (what, got.seq))
    check(got.seq != sgw_seq, "%s: the PGW got the SGW's own sequence number 0x%06x, expected one of the proxy's" %
          (what, sgw_seq))
    rig.run.step("%s: SGW seq 0x%06x -> PGW seq 0x%06x" % (what, sgw_seq, got.seq))
    return sgw_seq, got.seq


def scenario(run):
    rig = Rig(run, "commands")
    s = rig.create_session()
    accepted = m.cause(m.CAUSE_ACCEPTED)

    sgw_seq, pgw_seq = command_at_pgw(rig, s, m.MB_CMD, [m.ambr(150000, 250000),
                                                         m.bearer_context([m.ebi(s.ebi), m.qos(8, 7)])],
                                      "Modify Bearer Command")
    rig.relay(rig.pgw, m.UB_REQ, pgw_seq, [m.bearer_context([m.ebi(s.ebi), m.qos(8, 7)]), m.ambr(150000, 250000)],
              s.to_sgw, s.sgw_teid_c, sgw_seq, what="Update Bearer Request triggered by the command")
    rig.relay(rig.sgw, m.UB_RSP, sgw_seq, [accepted, m.bearer_context([m.ebi(s.ebi), accepted])],
              s.to_pgw, s.pgw_teid_c, pgw_seq, what="Update Bearer Response to the triggered request")
    run.step("Update Bearer triggered by the command: SGW got 0x%06x, PGW got its answer with 0x%06x" %
             (sgw_seq, pgw_seq))

    sgw_seq, pgw_seq = command_at_pgw(rig, s, m.DB_CMD, [m.bearer_context([m.ebi(s.ebi)])], "Delete Bearer Command")
    failed = m.cause(m.CAUSE_SYSTEM_FAILURE)
    got, _, _ = rig.relay(rig.pgw, m.DB_FAIL, pgw_seq, [failed, m.bearer_context([m.ebi(s.ebi), failed])],
                          s.to_sgw, s.sgw_teid_c, sgw_seq, what="Delete Bearer Failure Indication")
    check_eq(m.cause_of(got), m.CAUSE_SYSTEM_FAILURE, "Delete Bearer Failure Indication at the SGW: cause")
    run.step("Delete Bearer Failure Indication reached the SGW with its command's number 0x%06x" % sgw_seq)
    check_eq(rig.group.wait_sessions(1), 1, "sessions after the refused Delete Bearer Command")

    rig.delete_session(s)
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(scenario, "scapy scenario 3: Modify Bearer Command and Delete Bearer Command")
