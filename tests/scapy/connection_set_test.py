#!/usr/bin/python3
"""Scenario 8, PDN connection sets (TS 29.274 §7.9, TS 23.007 §16) through a
group of two workers:

- six sessions with distinct IMSIs (spread over both workers), each with the
  MME's and the SGW's FQ-CSIDs in its Create Session Request and the PGW's in
  the response; the FQ-CSIDs pass unchanged;
- Update PDN Connection Set Request (the MME renumbered a set) relayed to the
  PGW with the PGW's TEID, and its response back with the SGW's TEID and
  number;
- the SGW deletes its set 1 (four sessions): it gets one Delete PDN
  Connection Set Response, accepted; the PGW gets the request, FQ-CSIDs
  unchanged, TEID 0, from each worker that held sessions of the set, at most
  once per worker, with the proxy's numbers; the four sessions are gone
  (Modify Bearer: Context Not Found), the other two stay;
- the SGW's retransmission of that request gets the same answer, and nothing
  reaches the PGW;
- the PGW deletes the set it gave the two others: the SGW gets the request,
  the sessions go.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import Failure, check, check_eq, run_scenario  # noqa: E402
from s5 import Rig, Session  # noqa: E402

EXPECTED_TYPES = [m.CS_REQ, m.CS_RSP, m.UPCS_REQ, m.UPCS_RSP, m.DPCS_REQ, m.DPCS_RSP, m.MB_REQ, m.MB_RSP]
MME_NODE = "10.77.0.1"
WORKERS = 2


def worker_sessions(rig):
    return [p.get("sessions", 0) for p in rig.group.status()["processes"] if p["name"].startswith("worker")]


def receive_set_deletions(run, peer, sent, what):
    """The Delete PDN Connection Set Requests `peer` gets for the one the
    other side sent (`sent`): one per worker that held sessions of the set;
    each answered. Returns how many."""
    got_numbers = []
    while True:
        try:
            # After the first, a wait for another worker's copy.
            got, data, source = peer.receive(m.DPCS_REQ, what, timeout=3.0 if not got_numbers else 1.0)
        except Failure:
            if not got_numbers:
                raise
            break
        check_eq((got.T, got.teid), (1, 0), what + ": (T flag, header TEID)")
        problems = m.relay_differences(sent, data)
        check(not problems, what + ": changed beyond the sequence number:\n  " + "\n  ".join(problems))
        check(got.seq not in got_numbers, what + ": the same number twice")
        got_numbers.append(got.seq)
        peer.send(m.message(m.DPCS_RSP, got.seq, [m.cause(m.CAUSE_ACCEPTED)], teid=0), source[0])
        check(len(got_numbers) <= WORKERS, what + ": more copies than workers")
    return len(got_numbers)


def scenario(run):
    rig = Rig(run, "csets")
    sgw_node = rig.net.sgw
    pgw_node = rig.net.pgw
    sessions = []
    for i in range(6):
        s = Session(sgw_teid_c=0x5C000010 + i, pgw_teid_c=0x9E000010 + i, imsi="00101012300000%d" % i)
        sgw_set = 1 if i < 4 else 2
        s.csr_extra = (m.fq_csid(0, MME_NODE, 5), m.fq_csid(1, sgw_node, sgw_set))
        s.csrsp_extra = (m.fq_csid(0, pgw_node, 7 if i < 4 else 8),)
        sessions.append(rig.create_session(s))
    per_worker = worker_sessions(rig)
    check(len(per_worker) == WORKERS and all(n > 0 for n in per_worker),
          "the IMSIs should spread the sessions over both workers: %s" % per_worker)
    run.step("6 sessions, per worker %s" % per_worker)

    # The MME renumbered its set: the SGW tells the PGW, session by session.
    s = sessions[5]
    seq = rig.seq(rig.sgw)
    got, _, _ = rig.relay(rig.sgw, m.UPCS_REQ, seq, [m.fq_csid(0, MME_NODE, 6)], s.to_pgw, s.pgw_teid_c)
    rig.relay(rig.pgw, m.UPCS_RSP, got.seq, [m.cause(m.CAUSE_ACCEPTED), m.fq_csid(0, pgw_node, 9)], s.to_sgw,
              s.sgw_teid_c, seq)
    run.step("Update PDN Connection Set relayed both ways")

    # The SGW lost its set 1.
    seq = rig.seq(rig.sgw)
    request = m.message(m.DPCS_REQ, seq, [m.fq_csid(1, sgw_node, 1)], teid=0)
    rig.sgw.send(request, rig.net.access)
    answer, answer_bytes, source = rig.sgw.receive(m.DPCS_RSP, "Delete PDN Connection Set Response at the SGW")
    check_eq((answer.teid, answer.seq, m.cause_of(answer)), (0, seq, m.CAUSE_ACCEPTED),
             "Delete PDN Connection Set Response (TEID, sequence number, cause)")
    copies = receive_set_deletions(run, rig.pgw, request, "Delete PDN Connection Set Request at the PGW")
    rig.sgw.expect_quiet("one answer from the group, whatever the number of workers")
    check_eq(rig.group.wait_sessions(2), 2, "sessions left after the SGW's set 1 went")
    run.step("SGW set 1 deleted: answered once, the PGW told %d time(s) (one per worker holding the set)" % copies)

    rig.sgw.send(request, rig.net.access)
    again, again_bytes, _ = rig.sgw.receive(m.DPCS_RSP, "retransmitted Delete PDN Connection Set Request")
    check_eq(again_bytes, answer_bytes, "the answer to the retransmission")
    rig.pgw.expect_quiet("a retransmission is not carried out twice")
    run.step("retransmission answered from the cache")

    seq = rig.seq(rig.sgw)
    rig.sgw.send(m.message(m.MB_REQ, seq, [m.ebi(5)], teid=sessions[0].to_pgw), rig.net.access)
    late, _, _ = rig.sgw.receive(m.MB_RSP, "Modify Bearer of a deleted session")
    check_eq(m.cause_of(late), m.CAUSE_CONTEXT_NOT_FOUND, "Modify Bearer of a deleted session: cause")

    # The PGW lost the set of the two others (the one session renumbered 9
    # and the other still 8).
    seq = rig.seq(rig.pgw)
    request = m.message(m.DPCS_REQ, seq, [m.fq_csid(2, pgw_node, 8), m.fq_csid(2, pgw_node, 9)], teid=0)
    rig.pgw.send(request, rig.net.gateway)
    answer, _, _ = rig.pgw.receive(m.DPCS_RSP, "Delete PDN Connection Set Response at the PGW")
    check_eq((answer.seq, m.cause_of(answer)), (seq, m.CAUSE_ACCEPTED), "its (sequence number, cause)")
    copies = receive_set_deletions(run, rig.sgw, request, "Delete PDN Connection Set Request at the SGW")
    check_eq(rig.group.wait_sessions(0), 0, "sessions left after the PGW's sets went")
    run.step("PGW sets deleted: the SGW told %d time(s)" % copies)
    check_eq(rig.group.counter("worker.connection_set_sessions_deleted"), 6, "worker.connection_set_sessions_deleted")
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(scenario, "scapy scenario 8: Delete and Update PDN Connection Set")
