#!/usr/bin/python3
# Origin: a copy of the project's shared peer script ../shared/peers/scapy/gtpv2fix.py
# (sha256 01e85743ecbb1734d13b3bb41cc38b7833e6a2a68e87a52302fd86b00bffb5e4): these three origin
# lines were added after its shebang; the rest is unchanged. See README.md in this directory.
# gtpv2fix.py: monkey-patches for scapy 2.5.0 (Debian 12 python3-scapy) GTPv2-C build bugs; import it before building.
# usage: sys.path.insert(0, DIR_OF_THIS_FILE); import gtpv2fix   (run it directly for a self-check)
"""Bugs fixed (all on the *build* side; parsing of correct packets is fine):
 1. every gtp_v2 IE inherits gtp.IE_Base.post_build, which sets IE length = len(IE)-2
    (GTPv1 rule); GTPv2 needs len(IE)-4  -> every auto-computed IE length was +2.
    (upstream scapy PR #3822, fixed after 2.5.0)
 2. gtp_v2.GTPHeader inherits gtp.GTPHeader.post_build: length = len-8 (GTPv1 rule);
    GTPv2 needs len-4 -> message length was 4 short.  (upstream PR #3833)
 3. IE_IP_Address.post_build inserts a stray byte and its address field is only built
    when length is already 4/16 -> replaced.
 4. IE_Indication / other IEs whose ConditionalFields test pkt.length crash when length
    is None (TypeError) -> they are built with a provisional length guess.
Not fixed (do it by hand): GTPHeader defaults P=1 (piggyback flag) -> always pass P=0;
IE_ServingNetwork / ULI_TAI / ULI_ECGI cannot encode a 3-digit MNC.
"""
import struct
from scapy.contrib import gtp, gtp_v2


def _ie_post_build(self, p, pay):
    if self.fields_desc[1].name == "length" and self.length is None:
        p = p[:1] + struct.pack("!H", len(p) - 4) + p[3:]
    return p + pay


def _hdr_post_build(self, p, pay):
    p += pay
    if self.length is None:
        p = p[:2] + struct.pack("!H", len(p) - 4) + p[4:]
    return p


def _ipaddr_post_build(self, p, pay):
    if self.length is None:
        p = p[:1] + struct.pack("!H", len(p) - 4) + p[3:]
    return p + pay


_orig_self_build = {}


def _cond_len_self_build(self, *a, **kw):
    # ConditionalFields of these IEs test "pkt.length > N"; give them a length while
    # building, then let post_build compute the real one.
    if self.length is None:
        guess = getattr(self, "_build_len_guess", 255)
        self.length = guess
        try:
            return _orig_self_build[type(self)](self, *a, **kw)
        finally:
            self.length = None
    return _orig_self_build[type(self)](self, *a, **kw)


for _n in dir(gtp_v2):
    _c = getattr(gtp_v2, _n)
    if isinstance(_c, type) and issubclass(_c, gtp.IE_Base) and _c.__module__ == gtp_v2.__name__:
        if _c is gtp_v2.IE_IP_Address:
            continue
        if "post_build" not in _c.__dict__:
            _c.post_build = _ie_post_build

gtp_v2.GTPHeader.post_build = _hdr_post_build

# IE_IP_Address: build IPv4 (4 bytes) unless address6 set
gtp_v2.IE_IP_Address.post_build = _ipaddr_post_build
_orig_self_build[gtp_v2.IE_IP_Address] = gtp_v2.IE_IP_Address.self_build
def _ipaddr_self_build(self, *a, **kw):
    if self.length is None:
        self.length = 16 if self.address6 is not None else 4
        try:
            return _orig_self_build[gtp_v2.IE_IP_Address](self, *a, **kw)
        finally:
            self.length = None
    return _orig_self_build[gtp_v2.IE_IP_Address](self, *a, **kw)
gtp_v2.IE_IP_Address.self_build = _ipaddr_self_build

# IE_Indication: flags octets are conditional on length; default to 4 octets (Rel-10..13 size)
gtp_v2.IE_Indication._build_len_guess = 4
_orig_self_build[gtp_v2.IE_Indication] = gtp_v2.IE_Indication.self_build
gtp_v2.IE_Indication.self_build = _cond_len_self_build


if __name__ == "__main__":
    from scapy.all import raw
    m = gtp_v2.GTPHeader(P=0, T=1, seq=1, teid=0) / gtp_v2.GTPV2CreateSessionRequest(IE_list=[
        gtp_v2.IE_IMSI(IMSI="001010000000001"), gtp_v2.IE_Indication(),
        gtp_v2.IE_IP_Address(address="127.0.0.1"), gtp_v2.IE_APN(APN="internet")])
    b = raw(m)
    assert struct.unpack("!H", b[2:4])[0] == len(b) - 4, "header length"
    p, n = 12, 0
    while p < len(b):
        p += 4 + struct.unpack("!H", b[p + 1:p + 3])[0]
        n += 1
    assert p == len(b), "IE lengths do not add up"
    print("gtpv2fix OK: %d-byte CSR, %d IEs, lengths consistent" % (len(b), n))
