"""GTPv2-C messages of an SGW and a PGW on S5/S8, built with scapy 2.5.0.

Everything the scapy tests send is built here, never by the project's codec,
so that the proxy is checked against an implementation it shares no code
with. Importing this module applies gtpv2fix (scapy 2.5.0 build bugs) and
registers the two message classes scapy lacks (Change Notification Request
and Response). Every header is built with P=0 (scapy's default P=1 claims a
piggybacked message).

Also here: reading F-TEIDs and Causes out of parsed messages, and comparing a
relayed message with the one that was sent (the proxy may change the
header's TEID and sequence number and the control-plane F-TEIDs, nothing
else).
"""
import ipaddress
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtpv2fix  # noqa: E402,F401  (patches scapy before anything is built)
from scapy.all import raw  # noqa: E402
from scapy.packet import bind_layers  # noqa: E402
from scapy.contrib import gtp_v2 as g  # noqa: E402

# Message types (TS 29.274 Table 6.1-1).
ECHO_REQ, ECHO_RSP, VERSION_NOT_SUPPORTED = 1, 2, 3
CS_REQ, CS_RSP, MB_REQ, MB_RSP, DS_REQ, DS_RSP = 32, 33, 34, 35, 36, 37
CN_REQ, CN_RSP = 38, 39
MB_CMD, MB_FAIL, DB_CMD, DB_FAIL = 64, 65, 66, 67
CB_REQ, CB_RSP, UB_REQ, UB_RSP, DB_REQ, DB_RSP = 95, 96, 97, 98, 99, 100
SUSPEND_NOTIF, SUSPEND_ACK, RESUME_NOTIF, RESUME_ACK = 162, 163, 164, 165
DPCS_REQ, DPCS_RSP, UPCS_REQ, UPCS_RSP = 101, 102, 200, 201

NAMES = {1: "Echo Request", 2: "Echo Response", 3: "Version Not Supported Indication",
         32: "Create Session Request", 33: "Create Session Response", 34: "Modify Bearer Request",
         35: "Modify Bearer Response", 36: "Delete Session Request", 37: "Delete Session Response",
         38: "Change Notification Request", 39: "Change Notification Response",
         64: "Modify Bearer Command", 65: "Modify Bearer Failure Indication", 66: "Delete Bearer Command",
         67: "Delete Bearer Failure Indication", 95: "Create Bearer Request", 96: "Create Bearer Response",
         97: "Update Bearer Request", 98: "Update Bearer Response", 99: "Delete Bearer Request",
         100: "Delete Bearer Response", 162: "Suspend Notification", 163: "Suspend Acknowledge",
         164: "Resume Notification", 165: "Resume Acknowledge", 101: "Delete PDN Connection Set Request",
         102: "Delete PDN Connection Set Response", 200: "Update PDN Connection Set Request",
         201: "Update PDN Connection Set Response"}

# F-TEID interface types (TS 29.274 Table 8.22-1).
S5_SGW_U, S5_PGW_U, S5_SGW_C, S5_PGW_C = 4, 5, 6, 7
CONTROL_TYPES = (S5_SGW_C, S5_PGW_C)

CAUSE_ACCEPTED = 16
CAUSE_CONTEXT_NOT_FOUND = 64
CAUSE_SYSTEM_FAILURE = 72

COMMAND_BIT = 0x800000
IMSI = "001010123456789"

# A TFT creating one bidirectional packet filter for UDP (TS 24.008 10.5.6.12).
TFT_UDP = bytes([0x21, 0x31, 0x00, 0x02, 0x30, 0x11])


class GTPV2ChangeNotificationRequest(g.GTPV2Command):
    name = "GTPv2 Change Notification Request"


class GTPV2ChangeNotificationResponse(g.GTPV2Command):
    name = "GTPv2 Change Notification Response"


# Neither are the PDN Connection Set messages (TS 29.274 §7.9).
class GTPV2DeletePdnConnectionSetRequest(g.GTPV2Command):
    name = "GTPv2 Delete PDN Connection Set Request"


class GTPV2DeletePdnConnectionSetResponse(g.GTPV2Command):
    name = "GTPv2 Delete PDN Connection Set Response"


class GTPV2UpdatePdnConnectionSetRequest(g.GTPV2Command):
    name = "GTPv2 Update PDN Connection Set Request"


class GTPV2UpdatePdnConnectionSetResponse(g.GTPV2Command):
    name = "GTPv2 Update PDN Connection Set Response"


bind_layers(g.GTPHeader, GTPV2ChangeNotificationRequest, gtp_type=CN_REQ)
bind_layers(g.GTPHeader, GTPV2ChangeNotificationResponse, gtp_type=CN_RSP)
bind_layers(g.GTPHeader, GTPV2DeletePdnConnectionSetRequest, gtp_type=DPCS_REQ)
bind_layers(g.GTPHeader, GTPV2DeletePdnConnectionSetResponse, gtp_type=DPCS_RSP)
bind_layers(g.GTPHeader, GTPV2UpdatePdnConnectionSetRequest, gtp_type=UPCS_REQ)
bind_layers(g.GTPHeader, GTPV2UpdatePdnConnectionSetResponse, gtp_type=UPCS_RSP)

BODIES = {ECHO_REQ: g.GTPV2EchoRequest, ECHO_RSP: g.GTPV2EchoResponse,
          CS_REQ: g.GTPV2CreateSessionRequest, CS_RSP: g.GTPV2CreateSessionResponse,
          MB_REQ: g.GTPV2ModifyBearerRequest, MB_RSP: g.GTPV2ModifyBearerResponse,
          DS_REQ: g.GTPV2DeleteSessionRequest, DS_RSP: g.GTPV2DeleteSessionResponse,
          CN_REQ: GTPV2ChangeNotificationRequest, CN_RSP: GTPV2ChangeNotificationResponse,
          MB_CMD: g.GTPV2ModifyBearerCommand, MB_FAIL: g.GTPV2ModifyBearerFailureIndication,
          DB_CMD: g.GTPV2DeleteBearerCommand, DB_FAIL: g.GTPV2DeleteBearerFailureIndication,
          CB_REQ: g.GTPV2CreateBearerRequest, CB_RSP: g.GTPV2CreateBearerResponse,
          UB_REQ: g.GTPV2UpdateBearerRequest, UB_RSP: g.GTPV2UpdateBearerResponse,
          DB_REQ: g.GTPV2DeleteBearerRequest, DB_RSP: g.GTPV2DeleteBearerResponse,
          SUSPEND_NOTIF: g.GTPV2SuspendNotification, SUSPEND_ACK: g.GTPV2SuspendAcknowledge,
          RESUME_NOTIF: g.GTPV2ResumeNotification, RESUME_ACK: g.GTPV2ResumeAcknowledge,
          DPCS_REQ: GTPV2DeletePdnConnectionSetRequest, DPCS_RSP: GTPV2DeletePdnConnectionSetResponse,
          UPCS_REQ: GTPV2UpdatePdnConnectionSetRequest, UPCS_RSP: GTPV2UpdatePdnConnectionSetResponse}


def name(message_type):
    return "%s (%d)" % (NAMES.get(message_type, "message type"), message_type)


def message(message_type, seq, ies, teid=None, version=2):
    """The bytes of one GTPv2-C message: header TEID `teid` (None: no TEID,
    T=0), sequence number `seq`, top-level IEs `ies` (scapy IE objects)."""
    hdr = g.GTPHeader(version=version, P=0, T=0 if teid is None else 1, seq=seq)
    if teid is not None:
        hdr.teid = teid
    return raw(hdr / BODIES[message_type](IE_list=list(ies)))


def parse(data):
    """A received datagram as a scapy GTPHeader (its IEs in .IE_list)."""
    return g.GTPHeader(data)


# -- IEs -------------------------------------------------------------------

def is_v6(address):
    return ":" in address


def fteid(instance, interface_type, teid, address):
    """An F-TEID IE naming `address` (IPv4 or IPv6 text)."""
    if is_v6(address):
        return g.IE_FTEID(instance=instance, ipv4_present=0, ipv6_present=1, InterfaceType=interface_type,
                          GRE_Key=teid, ipv6=int(ipaddress.IPv6Address(address)))
    return g.IE_FTEID(instance=instance, ipv4_present=1, ipv6_present=0, InterfaceType=interface_type,
                      GRE_Key=teid, ipv4=address)


def ebi(value, instance=0):
    return g.IE_EPSBearerID(instance=instance, EBI=value)


def cause(value, instance=0):
    return g.IE_Cause(instance=instance, Cause=value)


def qos(qci=9, priority=9):
    return g.IE_Bearer_QoS(PCI=1, PriorityLevel=priority, PVI=0, QCI=qci)


def ambr(up=100000, down=200000):
    return g.IE_AMBR(AMBR_Uplink=up, AMBR_Downlink=down)


def recovery(value):
    return g.IE_RecoveryRestart(restart_counter=value)


def imsi(value=IMSI):
    return g.IE_IMSI(IMSI=value)


def fq_csid(instance, node, csid):
    """An FQ-CSID IE: node-ID `node` (an IPv4 address), one CSID."""
    return g.IE_FQCSID(instance=instance, nodeid_type=0, num_csid=1, nodeid_v4=node, csid=csid)


def rat(value=6):
    return g.IE_RAT(RAT_type=value)


def uli(tac=1, eci=0x1234567):
    return g.IE_ULI(TAI_Present=1, ECGI_Present=1, TAI=g.ULI_TAI(MCC="001", MNC="01", TAC=tac),
                    ECGI=g.ULI_ECGI(MCC="001", MNC="01", ECI=eci))


def bearer_context(ies, instance=0):
    return g.IE_BearerContext(instance=instance, IE_list=list(ies))


def tft():
    return g.IE_BearerTFT(Bearer_TFT=TFT_UDP)


def create_session_request(seq, sgw_address, sgw_teid_c, sgw_teid_u, ebi_value=5, imsi_value=IMSI, extra=()):
    """An SGW's Create Session Request on S5/S8: sender F-TEID type 6
    instance 0, a Bearer Context with EBI `ebi_value` and the S5/S8-U SGW
    F-TEID (type 4, instance 2); `extra` IEs at the end."""
    return message(CS_REQ, seq, teid=0, ies=[
        imsi(imsi_value), g.IE_MSISDN(digits="33612345678"), g.IE_MEI(MEI="3568540512345670"), uli(),
        g.IE_ServingNetwork(MCC="001", MNC="01"), rat(),
        g.IE_Indication(),
        fteid(0, S5_SGW_C, sgw_teid_c, sgw_address),
        g.IE_APN(APN="internet"), g.IE_SelectionMode(SelectionMode=0), g.IE_PDN_type(PDN_type=1),
        g.IE_PAA(PDN_type=1, ipv4="0.0.0.0"), g.IE_APN_Restriction(APN_Restriction=0), ambr(),
        bearer_context([ebi(ebi_value), fteid(2, S5_SGW_U, sgw_teid_u, sgw_address), qos()]),
        recovery(7)] + list(extra))


def create_session_response(seq, teid, pgw_address, pgw_teid_c, pgw_teid_u, ebi_value=5, extra=()):
    """A PGW's accepting Create Session Response: PGW S5/S8 GTP-C F-TEID
    (type 7, instance 1) and a Bearer Context created with the S5/S8-U PGW
    F-TEID (type 5, instance 2)."""
    return message(CS_RSP, seq, teid=teid, ies=[
        cause(CAUSE_ACCEPTED),
        fteid(1, S5_PGW_C, pgw_teid_c, pgw_address),
        g.IE_PAA(PDN_type=1, ipv4="100.77.0.1"), g.IE_APN_Restriction(APN_Restriction=0), ambr(),
        bearer_context([ebi(ebi_value), cause(CAUSE_ACCEPTED), fteid(2, S5_PGW_U, pgw_teid_u, pgw_address),
                        g.IE_ChargingID(ChargingID=0x77)]),
        recovery(3)] + list(extra))


# -- reading parsed messages ------------------------------------------------

def ies_of(msg, ie_class, instance=None):
    return [ie for ie in (msg.IE_list or []) if isinstance(ie, ie_class) and
            (instance is None or ie.instance == instance)]


def address_of(f):
    """The address an F-TEID names: its IPv4 address when it carries only
    that, its IPv6 address when only that, both "v4+v6" when both."""
    out = []
    if f.ipv4_present:
        out.append(str(f.ipv4))
    if f.ipv6_present:
        out.append(str(ipaddress.IPv6Address(f.ipv6)))
    return "+".join(out)


def fteids(msg):
    """Top-level F-TEIDs of `msg` by instance."""
    return {f.instance: f for f in ies_of(msg, g.IE_FTEID)}


def cause_of(msg):
    causes = ies_of(msg, g.IE_Cause)
    return causes[0].Cause if causes else None


def top_level_ies(data):
    """The top-level IEs of a message's bytes as (type, instance, bytes),
    read without scapy so that any IE, known to scapy or not, is compared
    as it is on the wire."""
    flags = data[0]
    start = 12 if flags & 0x08 else 8
    end = 4 + struct.unpack("!H", data[2:4])[0]
    out, p = [], start
    while p + 4 <= end:
        length = struct.unpack("!H", data[p + 1:p + 3])[0]
        out.append((data[p], data[p + 3] & 0x0F, data[p:p + 4 + length]))
        p += 4 + length
    return out


def relay_differences(sent, got, control_types=CONTROL_TYPES, recovery=None):
    """What differs between the message a peer sent and the one the proxy
    relayed, besides the header's TEID and sequence number and the
    control-plane F-TEIDs (interface types `control_types`), whose TEID and
    address the proxy rewrites: a list of sentences, empty when nothing
    else changed. An F-TEID changing address family is allowed (its length
    changes); its interface type and instance must stay. A Recovery IE must
    carry the group's value `recovery` (when given): the peers see one node."""
    problems = []
    if sent[0] != got[0]:
        problems.append("header flags 0x%02x became 0x%02x" % (sent[0], got[0]))
    if sent[1] != got[1]:
        problems.append("message type %d became %d" % (sent[1], got[1]))
    if struct.unpack("!H", got[2:4])[0] + 4 != len(got):
        problems.append("header length %d does not match the %d octets received" %
                        (struct.unpack("!H", got[2:4])[0], len(got)))
    a, b = top_level_ies(sent), top_level_ies(got)
    if [(t, i) for t, i, _ in a] != [(t, i) for t, i, _ in b]:
        problems.append("IEs (type/instance) %s became %s" % ([(t, i) for t, i, _ in a], [(t, i) for t, i, _ in b]))
        return problems
    for (t, i, x), (_, _, y) in zip(a, b):
        if t == 87 and len(x) >= 5 and (x[4] & 0x3F) in control_types:
            if (x[4] & 0x3F) != (y[4] & 0x3F):
                problems.append("control F-TEID instance %d: interface type %d became %d" %
                                (i, x[4] & 0x3F, y[4] & 0x3F))
            continue
        if t == 3 and recovery is not None:
            if len(y) != 5 or y[4] != recovery:
                problems.append("Recovery IE %s is not the group's value %d" % (y.hex(), recovery))
            continue
        if x != y:
            problems.append("IE type %d instance %d changed: %s -> %s" % (t, i, x.hex(), y.hex()))
    return problems
