#!/usr/bin/python3
"""Scenario 6, requests the proxy must refuse itself:

- a Modify Bearer Request and a Delete Session Request to TEIDs the proxy
  never gave get Context Not Found (cause 64) in a response of the right
  type with the requester's sequence number, and in the header the sender
  F-TEID's TEID when the request has one, else 0 (TS 29.274 5.5.2);
- a GTP version 3 header gets a Version Not Supported Indication
  (TS 29.274 7.7.2) in a version 2 header.
No gateway is ever contacted.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages as m  # noqa: E402
from harness import GTPC_PORT, check_eq, run_scenario  # noqa: E402
from s5 import Rig  # noqa: E402

EXPECTED_TYPES = [m.MB_REQ, m.MB_RSP, m.DS_REQ, m.DS_RSP, m.VERSION_NOT_SUPPORTED]


def refused(rig, request_type, teid, ies, expect_teid, what):
    seq = rig.seq(rig.sgw)
    rig.sgw.send(m.message(request_type, seq, ies, teid=teid), rig.net.access)
    got, _, source = rig.sgw.receive(request_type + 1, what)
    check_eq(source, (rig.net.access, GTPC_PORT), what + ": source")
    check_eq(got.seq, seq, what + ": sequence number")
    check_eq((got.T, got.teid), (1, expect_teid), what + ": (T flag, header TEID)")
    check_eq(m.cause_of(got), m.CAUSE_CONTEXT_NOT_FOUND, what + ": cause")
    rig.run.step("%s: %s with cause 64, TEID 0x%08x" % (what, m.name(got.gtp_type), got.teid))


def scenario(run):
    rig = Rig(run, "errors")
    net = rig.net
    not_found0 = rig.group.counter("worker.context_not_found")
    vns0 = rig.group.counter("forwarder.version_not_supported_sent")

    refused(rig, m.MB_REQ, 0x0BADCAFE,
            [m.fteid(0, m.S5_SGW_C, 0x5C0000F1, net.sgw), m.bearer_context([m.ebi(5)])], 0x5C0000F1,
            "Modify Bearer Request (sender F-TEID) to an unknown TEID")
    refused(rig, m.MB_REQ, 0x00C0FFEE, [m.bearer_context([m.ebi(5)])], 0,
            "Modify Bearer Request (no sender F-TEID) to an unknown TEID")
    refused(rig, m.DS_REQ, 0x7FFF0001, [m.ebi(5)], 0, "Delete Session Request to an unknown TEID")
    check_eq(rig.group.counter("worker.context_not_found") - not_found0, 3, "worker.context_not_found")

    seq = rig.seq(rig.sgw)
    rig.sgw.send(m.message(m.CS_REQ, seq, [m.imsi(), m.fteid(0, m.S5_SGW_C, 0x5C0000F2, net.sgw)], teid=0, version=3),
                 net.access)
    got, data, source = rig.sgw.receive(m.VERSION_NOT_SUPPORTED, "GTP version 3 Create Session Request")
    check_eq(source, (net.access, GTPC_PORT), "Version Not Supported Indication: source")
    check_eq(data[0] >> 5, 2, "Version Not Supported Indication: GTP version")
    check_eq(len(m.top_level_ies(data)), 0, "Version Not Supported Indication: IEs (it has none)")
    run.step("version 3: Version Not Supported Indication (seq 0x%06x)" % got.seq)
    check_eq(rig.group.counter("forwarder.version_not_supported_sent") - vns0, 1,
             "forwarder.version_not_supported_sent")
    rig.pgw.expect_quiet("requests the proxy refuses itself", 0.2)
    check_eq(rig.group.sessions(), 0, "sessions")
    rig.capture.finish(EXPECTED_TYPES)


if __name__ == "__main__":
    run_scenario(scenario, "scapy scenario 6: unknown TEID and unsupported version")
