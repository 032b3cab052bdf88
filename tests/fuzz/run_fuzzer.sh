#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, seeded with the bundled vectors.
#   run_fuzzer.sh FUZZER VERSION SECONDS WORKDIR
# Fails when the fuzzer finds a crash, a leak, undefined behaviour or a broken
# codec invariant (the targets abort on those).
set -euo pipefail
fuzzer="$(realpath "$1")" version="$2" seconds="$3" work="$(realpath -m "$4")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
corpus="$work/corpus_v$version"
rm -rf "$corpus" && mkdir -p "$corpus"
python3 "$here/make_corpus.py" "$version" "$corpus"
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 "$corpus"
