#!/usr/bin/python3
"""Scenario 7, scenario 1 (session life) over IPv6, in a network namespace
the test creates (`unshare --net`, so root) with its own loopback
addresses; nothing is configured outside it.

--family v6:    the proxy, the SGW and the PGW on IPv6 only; every F-TEID
                carries IPv6 addresses.
--family mixed: the proxy's access address IPv6 and its gateway address
                IPv4 (SGW on IPv6, PGW on IPv4): the PGW must receive a
                sender F-TEID with the proxy's IPv4 gateway address (not
                the SGW's IPv6 one), and the SGW a PGW F-TEID with the
                proxy's IPv6 access address. User-plane F-TEIDs still pass
                unchanged, in the family their owner gave.

The script starts itself again inside the namespace (with --in-netns),
where it brings `lo` up, adds the IPv6 addresses and runs the scenario;
tshark captures `lo` of the namespace.
"""
import argparse
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# (access, gateway, SGW, PGW, capture marker) of each variant.
ADDRESSES = {
    "v6": ("fd00:77::1", "fd00:77::2", "fd00:77::11", "fd00:77::21", "fd00:77::30"),
    "mixed": ("fd00:77::1", "127.77.7.2", "fd00:77::11", "127.77.7.21", "fd00:77::30"),
}
DESCRIPTIONS = {
    "v6": "scapy scenario 7: session life, IPv6 on both legs (network namespace)",
    "mixed": "scapy scenario 7: session life, IPv6 toward the SGW, IPv4 toward the PGW (network namespace)",
}


def setup_namespace(addresses):
    """Inside the new namespace: lo up (127.0.0.0/8 comes with it) and the
    variant's IPv6 addresses on it."""
    commands = [["ip", "link", "set", "lo", "up"]]
    for a in sorted(set(addresses)):
        if ":" in a:
            commands.append(["ip", "-6", "addr", "add", a + "/128", "dev", "lo", "nodad"])
    for c in commands:
        out = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=10)
        if out.returncode != 0:
            print("FAIL: %s: %s" % (" ".join(c), out.stdout.strip()), flush=True)
            sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description="scapy scenario 7: session life over IPv6 in a network namespace")
    ap.add_argument("--bin", required=True, help="directory of gtpcp, gtpcp-forwarder and gtpcp-worker")
    ap.add_argument("--family", choices=sorted(ADDRESSES), required=True)
    ap.add_argument("--timeout", type=float, default=100, help="overall limit in seconds (default 100)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory even when the test passes")
    ap.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.in_netns:
        if os.geteuid() != 0:
            print("FAIL: this test creates a network namespace (unshare --net): it must run as root", flush=True)
            sys.exit(1)
        argv = ["unshare", "--net", "--", sys.executable, os.path.abspath(__file__), "--in-netns"] + sys.argv[1:]
        try:
            # The inner run has its own --timeout and stops what it started;
            # this bound only catches an inner run that hangs anyway.
            sys.exit(subprocess.run(argv, timeout=args.timeout + 15).returncode)
        except subprocess.TimeoutExpired:
            print("FAIL: the run in the network namespace did not end", flush=True)
            sys.exit(1)

    setup_namespace(ADDRESSES[args.family])
    # scapy reads the interfaces' addresses when imported: only now.
    from harness import run_scenario
    from s5 import Net
    from session_life_test import session_life
    access, gateway, sgw, pgw, marker = ADDRESSES[args.family]
    net = Net(access=access, gateway=gateway, sgw=sgw, pgw=pgw, marker=marker, bpf="udp port 2123")
    run_scenario(lambda run: session_life(run, "life-" + args.family, net), DESCRIPTIONS[args.family], args)


if __name__ == "__main__":
    main()
