#!/usr/bin/env bash
# The whole test suite, as CI runs it (./gtpcp test):
#   1. release build (warnings as errors): unit and integration tests
#   2. ASan+UBSan build of every unit test binary (and what it links): the unit tests
#   3. ThreadSanitizer build of the code shared between threads and processes
#      (the ring): its unit tests
#   4. clang/libFuzzer build: each fuzz target for a bounded time on the bundled vectors
# Extra arguments go to every ctest call (e.g. -R Vectors).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc)"
start=$(date +%s)
stage() { printf '\n== %s (%ds)\n' "$1" $(( $(date +%s) - start )); }

stage "release build"
"$ROOT/tools/setup.sh" --test
stage "release tests"
ctest --test-dir "$ROOT/build/release" --output-on-failure -j "$JOBS" "$@"

stage "ASan+UBSan build"
"$ROOT/tools/setup.sh" --test --tree asan --target unit_tests
stage "ASan+UBSan tests"
ctest --test-dir "$ROOT/build/asan" --output-on-failure -j "$JOBS" -L unit "$@"

stage "ThreadSanitizer build"
"$ROOT/tools/setup.sh" --test --tree tsan --target gtpcp_ring_tests
stage "ThreadSanitizer tests"
ctest --test-dir "$ROOT/build/tsan" --output-on-failure -j "$JOBS" -L unit "$@"

stage "fuzz build"
"$ROOT/tools/setup.sh" --test --tree fuzz
stage "fuzzing"
ctest --test-dir "$ROOT/build/fuzz" --output-on-failure -j "$JOBS" "$@"

stage "all tests passed"
