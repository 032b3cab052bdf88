#!/usr/bin/env python3
"""Writes one libFuzzer corpus file per message of the bundled vectors.

make_corpus.py VERSION OUT_DIR takes every record of
tests/data/vectors/gtpv{VERSION}.jsonl, the malformed ones too: they are the
interesting edges. Records holding IEs without a header are skipped.
"""
import json
import os
import sys

version, out = sys.argv[1], sys.argv[2]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "vectors")
os.makedirs(out, exist_ok=True)
count = 0
with open(os.path.join(root, f"gtpv{version}.jsonl")) as f:
    for n, line in enumerate(f):
        record = json.loads(line)
        if record.get("form") == "ie_payload_only":
            continue
        with open(os.path.join(out, f"vector_{n:03d}"), "wb") as w:
            w.write(bytes.fromhex(record["hex"]))
        count += 1
print(f"{count} corpus files in {out}")
