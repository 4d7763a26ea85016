#!/usr/bin/env bash
# Installs what refenc needs to build and test on Debian, and nothing that is already there.
# Idempotent: a second run checks the packages and exits without touching apt.
# Usage: scripts/setup.sh [--test]   (--test adds the tools the test suite uses: clang, sox, espeak-ng, redis-server)
# redis-tools is in the base set: the nightly workload's warm-shared cells run a private Redis server
# from its redis-check-rdb (the server's multi-call binary), without installing the system service.
# libgoogle-perftools-dev gives the link-time libtcmalloc_minimal.so (with libtcmalloc-minimal4): the
# CLI and test_encoders run on tcmalloc_minimal.
# The Python package (python/) builds against Debian's python3 (/usr/bin/python3) with pybind11; its
# tests (--test) import Debian's python3-torch and run under python3-pytest.
set -euo pipefail

pkgs=(
  build-essential cmake g++ pkg-config ccache make git
  libtorch-dev libopenblas0-pthread libgoogle-perftools-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev catch2
  libsndfile1-dev libsamplerate0-dev libssl-dev libhiredis-dev
  redis-tools
  python3 python3-dev pybind11-dev
)
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(clang libclang-rt-14-dev sox espeak-ng chromium python3 time redis-server python3-torch python3-pytest)
fi

missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "refenc setup: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
