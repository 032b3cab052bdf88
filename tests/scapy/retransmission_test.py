#!/usr/bin/python3
"""Scenario 4, a retransmitted request (TS 29.274 7.6, DESIGN.md
"Translation rules"): the SGW sends one Modify Bearer Request twice before
the answer; the PGW must see two identical copies (same translated
sequence number). Once answered, a third copy must get the same answer
bytes again from the proxy, and the PGW must see nothing of it. The
workers' counters say the same: one request sent again, one answer
replayed.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import check, check_eq, run_scenario  # noqa: E402
from s5 import Rig  # noqa: E402

EXPECTED_TYPES = [m.CS_REQ, m.CS_RSP, m.MB_REQ, m.MB_RSP, m.DS_REQ, m.DS_RSP]


def scenario(run):
    rig = Rig(run, "retrans")
    net = rig.net
    s = rig.create_session()
    retransmitted0 = rig.group.counter("worker.requests_retransmitted")
    replayed0 = rig.group.counter("worker.answers_replayed")

    seq = rig.seq(rig.sgw)
    ies = [m.bearer_context([m.ebi(s.ebi), m.fteid(1, m.S5_SGW_U, s.sgw_teid_u + 7, net.sgw)])]
    first, _, copy1 = rig.relay(rig.sgw, m.MB_REQ, seq, ies, s.to_pgw, s.pgw_teid_c, what="Modify Bearer Request")
    rig.sgw.send(m.message(m.MB_REQ, seq, ies, teid=s.to_pgw), net.access)
    _, copy2, _ = rig.pgw.receive(m.MB_REQ, "Modify Bearer Request sent again before the answer")
    check_eq(copy2, copy1, "the second copy at the PGW (bytes)")
    run.step("both copies reached the PGW, identical (seq 0x%06x)" % first.seq)

    rsp = m.message(m.MB_RSP, first.seq, [m.cause(m.CAUSE_ACCEPTED),
                                          m.bearer_context([m.ebi(s.ebi), m.cause(m.CAUSE_ACCEPTED)])],
                    teid=s.to_sgw)
    rig.pgw.send(rsp, net.gateway)
    got, answer, _ = rig.sgw.receive(m.MB_RSP, "Modify Bearer Response")
    check_eq((got.seq, got.teid), (seq, s.sgw_teid_c), "Modify Bearer Response at the SGW (seq, TEID)")
    rig.sgw.expect_quiet("after the one Modify Bearer Response")

    rig.sgw.send(m.message(m.MB_REQ, seq, ies, teid=s.to_pgw), net.access)
    _, again, _ = rig.sgw.receive(m.MB_RSP, "Modify Bearer Request sent a third time, after the answer")
    check_eq(again, answer, "the answer to the third copy (bytes)")
    rig.pgw.expect_quiet("the third copy, answered by the proxy")
    run.step("third copy answered from the proxy's cache, nothing reached the PGW")

    check_eq(rig.group.counter("worker.requests_retransmitted") - retransmitted0, 1,
             "worker.requests_retransmitted during the scenario")
    check_eq(rig.group.counter("worker.answers_replayed") - replayed0, 1, "worker.answers_replayed during the scenario")
    check(rig.group.sessions() == 1, "the retransmissions changed the session count")

    rig.delete_session(s)
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(scenario, "scapy scenario 4: retransmitted Modify Bearer Request")
