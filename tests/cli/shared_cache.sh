#!/usr/bin/env bash
# The shared Redis tier through the CLI, against a redis-server this script starts on a free loopback
# port and always stops: a second process on an empty disk folder gets `from shared` with the same
# artifact; with the server stopped the same command still succeeds (`from encoded`) and warns once;
# four replica processes on the same clips encode each clip once; a password is never printed; a
# remote server without a password is refused; voices added on one host are seen and removed on another.
#
#   tests/cli/shared_cache.sh path/to/refenc       (exit 77: redis-server not installed, skipped)
set -uo pipefail
refenc=${1:?usage: shared_cache.sh REFENC}
command -v redis-server >/dev/null || { echo "SKIP: redis-server not installed (scripts/setup.sh --test)"; exit 77; }
work=$(mktemp -d)
rpid=""
stop_redis() {
  if [[ -n $rpid ]]; then
    kill -9 "$rpid" 2>/dev/null
    wait "$rpid" 2>/dev/null
    rpid=""
  fi
}
trap 'stop_redis; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_redis() {
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" --daemonize no \
    --maxmemory 64mb --maxmemory-policy allkeys-lru "$@" >/dev/null 2>&1 &
  rpid=$!
  for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "redis-server did not start"
  exit 1
}
url="redis://127.0.0.1:$port"
. "$(dirname "$0")/lib.sh"

python3 - "$work" <<'PY'
import math, random, struct, sys, wave
for n in range(3):
    random.seed(n)
    w = wave.open(f"{sys.argv[1]}/clip{n}.wav", "wb")
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    f = 180 + 70 * n
    w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * f * i / 16000) + random.gauss(0, 300)))
                           for i in range(16000 * 2)))
    w.close()
PY

enc() {  # enc NAME DISK-FOLDER CLIP [more args]: refenc encode, stdout to NAME.out, stderr to NAME.err
  local name=$1 disk=$2 clip=$3
  shift 3
  "$refenc" encode "$work/$clip" --model fish-s2-pro --cache-dir "$work/$disk" --out "$work/$name.json" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
}
from_of() { grep -o 'from [a-z]*' "$work/$1.out" | head -1; }
warnings() { grep -c '^refenc: warning:' "$work/$1.err"; }

start_redis
enc first disk-a clip0.wav --shared-cache "$url"
check "first process encodes" [ "$(from_of first)" = "from encoded" ]
enc second disk-b clip0.wav --shared-cache "$url"
check "second process, empty disk: from shared" [ "$(from_of second)" = "from shared" ]
check "same artifact" cmp -s "$work/first.json" "$work/second.json"
check "no warnings while the server is up" [ "$(cat "$work/first.err" "$work/second.err" | grep -c warning)" = 0 ]
REFENC_SHARED_CACHE="$url" "$refenc" cache stats --root "$work/disk-b" >"$work/stats.out" 2>&1
check "cache stats shows the shared tier" grep -q "entries  1" "$work/stats.out"
sed 's/^/     | /' "$work/stats.out"

stop_redis
enc down disk-c clip0.wav --shared-cache "$url"
rc=$?
check "server stopped: still succeeds" [ $rc -eq 0 ]
check "server stopped: from encoded" [ "$(from_of down)" = "from encoded" ]
check "server stopped: exactly one warning" [ "$(warnings down)" = 1 ]
sed 's/^/     | /' "$work/down.err"

start_redis
enc auth disk-d clip0.wav --shared-cache "redis://:hunter2-secret@127.0.0.1:$port"
check "a password is never printed" bash -c "! grep -q hunter2 '$work/auth.out' '$work/auth.err'"
check "a refused login warns once and succeeds" [ "$(warnings auth)" = 1 ]
sed 's/^/     | /' "$work/auth.err"
"$refenc" encode "$work/clip0.wav" --model fish-s2-pro --shared-cache redis://10.255.255.1:6379 >"$work/remote.out" 2>"$work/remote.err"
rc=$?
check "a remote server without a password is refused" bash -c "[ $rc -ne 0 ] && grep -q shared-cache-insecure '$work/remote.err'"
sed 's/^/     | /' "$work/remote.err"

# Four replicas, each with its own disk folder, the same three clips in different orders, at once.
pids=()
for r in 0 1 2 3; do
  (
    for i in 0 1 2; do
      c=$(((i + r) % 3))
      REFENC_SHARED_CACHE="$url" enc "replica$r-$c" "replica$r" "clip$c.wav"
    done
  ) &
  pids+=($!)
done
wait "${pids[@]}"
encoded=$(cat "$work"/replica*.out | grep -c 'from encoded')
shared=$(cat "$work"/replica*.out | grep -c 'from shared')
echo "     | replicas: $encoded encoded, $shared from shared (3 distinct clips, 12 requests)"
check "four replicas: encodes = distinct clips" [ "$encoded" = 3 ]

# Registered voices: added on host A, seen on host B, removed on A, gone on B.
"$refenc" voice add Alice "$work/clip1.wav" --model fish-s2-pro --root "$work/host-a" --shared-cache "$url" >/dev/null 2>"$work/va.err"
"$refenc" voice list --root "$work/host-b" --shared-cache "$url" >"$work/vl.out" 2>&1
check "voice list on B shows A's voice" grep -q "^alice " "$work/vl.out"
"$refenc" voice show alice --root "$work/host-b" --shared-cache "$url" >"$work/vb.out" 2>&1
check "voice added on A is seen on B" grep -q "voice      alice" "$work/vb.out"
"$refenc" voice rm alice --root "$work/host-a" --shared-cache "$url" >/dev/null 2>&1
"$refenc" voice show alice --root "$work/host-b" --shared-cache "$url" >"$work/vb2.out" 2>&1
check "voice removed on A is gone on B" grep -q "not registered" "$work/vb2.out"
check "and from B's disk" bash -c "[ -z \"\$(ls -A '$work/host-b/voices/v1/fish-s2-pro/alice' 2>/dev/null)\" ]"

stop_redis
check "nothing listens after" bash -c "! redis-cli -p $port ping >/dev/null 2>&1"
finish
