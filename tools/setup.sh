#!/usr/bin/env bash
# Installs the Debian 12 packages gtpcp needs when they are missing, then
# configures and builds a tree. Idempotent: a second run only builds what
# changed.
#
#   tools/setup.sh [--test] [--tree release|asan|tsan|fuzz] [--target T]...
#
#   --test     also install what the test suite needs (tshark, clang for the fuzzers)
#   --tree     which build tree: release (default, build/release), asan
#              (ASan+UBSan, build/asan), tsan (ThreadSanitizer, build/tsan) or
#              fuzz (clang + libFuzzer, build/fuzz)
#   --target   build only these targets (default: all of the tree)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TREE=release
WITH_TEST=0
TARGETS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --test) WITH_TEST=1 ;;
    --tree) TREE="$2"; shift ;;
    --target) TARGETS+=("$2"); shift ;;
    *) echo "setup.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

# Build dependencies (every command), then what only the tests use.
BUILD_PACKAGES=(cmake ninja-build g++ pkg-config python3 libexpected-dev nlohmann-json3-dev
                libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libpcap-dev libboost-dev
                libyaml-cpp-dev libspdlog-dev libfmt-dev libhiredis-dev libzmq3-dev cppzmq-dev
                protobuf-compiler libprotobuf-dev redis-server prometheus-cpp-dev)
TEST_PACKAGES=(tshark clang libclang-rt-14-dev python3-scapy iproute2 util-linux redis-tools osmo-ggsn osmo-gtphub
               frr iputils-ping prometheus)

missing_packages() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
      echo "$p"
    fi
  done
}

install_packages() {
  local missing
  mapfile -t missing < <(missing_packages "$@")
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "setup: installing ${missing[*]}" >&2
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

install_packages "${BUILD_PACKAGES[@]}"
[[ $WITH_TEST -eq 1 || $TREE == fuzz ]] && install_packages "${TEST_PACKAGES[@]}"

BUILD_DIR="$ROOT/build/$TREE"
CONFIG=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGTPCP_WERROR=ON)
case "$TREE" in
  release) ;;
  # -O1: what ASan is designed for, and half the compile time of -O2.
  asan) CONFIG+=(-DGTPCP_SANITIZE=ON -DGTPCP_BENCH=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG") ;;
  tsan) CONFIG+=(-DGTPCP_TSAN=ON -DGTPCP_BENCH=OFF) ;;
  fuzz) CONFIG+=(-DGTPCP_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++) ;;
  *) echo "setup.sh: unknown tree '$TREE' (release, asan, tsan, fuzz)" >&2; exit 2 ;;
esac

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" "${CONFIG[@]}" >/dev/null
fi
JOBS="$(nproc)"
if [[ ${#TARGETS[@]} -gt 0 ]]; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"
else
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
