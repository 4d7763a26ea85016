#!/usr/bin/env bash
# `refenc profile` with a warm-shared phase and `cache.shared: "local"`, through the real encoder and
# the real Redis tier: the run starts its own redis-server on loopback, replica B's requests are all
# `shared_hit` with no encode, the summary shows them apart, and nothing listens afterwards, also when
# the run fails part-way, is interrupted (SIGINT) or killed (SIGKILL); a bad cache.shared is one error
# line naming the manifest and the field.
#
#   tests/cli/profile_shared.sh path/to/refenc       (exit 77: redis-server not installed, skipped)
set -uo pipefail
refenc=${1:?usage: profile_shared.sh REFENC}
command -v redis-server >/dev/null || command -v redis-check-rdb >/dev/null ||
  { echo "SKIP: no Redis server installed (scripts/setup.sh)"; exit 77; }
clips=$(cd "$(dirname "$0")/../../workloads/clips" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
# manifest FILE SHARED [EXTRA-MODEL-JSON]: one tiny Fish model (and EXTRA), a cold cell and a warm-shared one.
manifest() {
  python3 - "$1" "$2" "$clips" "${3:-}" <<'PY'
import json, sys
path, shared, clips, extra = sys.argv[1:5]
synth = {"source": "test figures", "step_base_ms": 1, "steps_per_audio_second": 5}
models = [{"name": "fish-s2-pro", "encoder": {"scale": "tiny"}, "synthesis": synth}]
if extra:
    models.append(json.loads(extra) | {"synthesis": synth})
json.dump({"schema_version": 1, "name": "shared-test", "seed": 3, "models": models,
           "references": {"clips": [f"{clips}/en-m-16k.flac", f"{clips}/de-m-24k.flac"], "variants": 6, "warmup": 1},
           "texts": ["Hello there."], "concurrency": [2],
           "phases": [{"kind": "cold", "requests": 2}, {"kind": "warm-shared", "requests": 4, "distinct": 4}],
           "arms": [{"name": "m4a"}], "cache": {"shared": shared}}, open(path, "w"))
PY
}
# No private server and no folder of one may outlive a run (their folders are under TMPDIR=$work/tmp).
no_server_process() { ! pgrep -f "$work/tmp/refenc-redis" >/dev/null; }
no_server_left() { [[ -z $(ls "$work/tmp" | grep refenc-redis) ]] && ! pgrep -f "$work/tmp/refenc-redis" >/dev/null; }
mkdir -p "$work/tmp"

manifest "$work/ok.json" local
# $REFENC_SHARED_CACHE must not be read by profile: it points nowhere reachable.
TMPDIR="$work/tmp" REFENC_SHARED_CACHE=redis://192.0.2.1:6379 "$refenc" profile "$work/ok.json" --out "$work/run" \
  --no-progress >"$work/ok.out" 2>"$work/ok.err"
rc=$?
check "profile completes (gate codes only)" bash -c "[[ $rc == 0 || $rc == 10 || $rc == 11 || $rc == 12 ]]"
sed 's/^/     | /' "$work/ok.out" | head -12
python3 - "$work/run" >"$work/ok.check" 2>&1 <<'PY'
import json, socket, sys
run = sys.argv[1]
report = json.load(open(f"{run}/report.json"))
ctx = report["context"]["shared_cache"]
assert ctx.startswith("local redis-server on 127.0.0.1:"), ctx
port = int(ctx.split("127.0.0.1:")[1].split(",")[0])
cell = [c for c in report["cells"] if c["phase"] == "warm-shared"][0]
cache = cell["cache"]
assert cell["outcomes"] == {"shared_hit": 4}, cell["outcomes"]
assert cache["shared_hits"] == 4 and cache["misses"] == 4 and cache["disk_hits"] == 0, cache
assert cache["misses"] - cache["disk_hits"] - cache["shared_hits"] + cache["uncacheable"] == 0  # encodes
assert cache["shared_errors"] == 0 and cache["shared_lease_takeovers"] == 0, cache
rows = [json.loads(l) for l in open(f"{run}/requests.jsonl")]
mine = [r for r in rows if r["cell"] == cell["id"]]
assert len(mine) == 4 and all(r["outcome"] == "shared_hit" for r in mine), mine
cold = [c for c in report["cells"] if c["phase"] == "cold"][0]
assert cold["outcomes"] == {"encoded": 2}, cold["outcomes"]
s = socket.socket()
s.settimeout(1)
try:
    s.connect(("127.0.0.1", port))
    print(f"something listens on {port} after the run")
    sys.exit(1)
except OSError:
    pass
print("shared-hit encode p50 ms", round(1000 * cell["stages"]["encode"]["p50"], 2))
PY
check "replica B: 4 shared hits, nothing encoded, server gone" [ $? = 0 ]
sed 's/^/     | /' "$work/ok.check"
check "summary shows shared hits apart" grep -q "from shared 4 of 4 (100%), memory 0, disk 0, encoded 0" "$work/ok.out"
check "summary.md too" grep -q "from shared 4 of 4" "$work/run/summary.md"
check "html: shared_hits counter" grep -q '<th class="n">shared_hits</th>' "$work/run/report.html"
check "no server or folder left after the run" no_server_left

# A run that fails after the server started (the second model's module does not exist).
manifest "$work/fail.json" local '{"name": "qwen3-tts", "encoder": {"module": "/nonexistent/module.pt"}}'
TMPDIR="$work/tmp" "$refenc" profile "$work/fail.json" --out "$work/run-fail" --no-progress >"$work/fail.out" \
  2>"$work/fail.err"
rc=$?
check "failing run exits with an error" bash -c "[[ $rc != 0 && $rc != 10 && $rc != 11 && $rc != 12 ]]"
check "with one error line" [ "$(grep -c '^refenc: error:' "$work/fail.err")" = 1 ]
check "no server or folder left after the failed run" no_server_left

# Interrupted (SIGINT: a partial report, exit 130) and killed (SIGKILL: the server dies with it) runs.
# started_server: waits up to 60 s for the run's private server folder to appear.
started_server() {
  for _ in $(seq 600); do
    ls "$work/tmp" | grep -q refenc-redis && return 0
    sleep 0.1
  done
  return 1
}
for signal in INT KILL; do
  TMPDIR="$work/tmp" "$refenc" profile "$work/ok.json" --out "$work/run-$signal" --no-progress >/dev/null 2>&1 &
  pid=$!
  started_server
  check "SIG$signal: the run started its server" [ $? = 0 ]
  kill -"$signal" "$pid"
  wait "$pid" 2>/dev/null
  rc=$?
  [[ $signal == INT ]] && check "SIGINT: exit 130 (partial report)" [ $rc = 130 ]
  # SIGKILL leaves the folder (no destructor ran) but not the server: it dies with its parent.
  for _ in $(seq 50); do pgrep -f "$work/tmp/refenc-redis" >/dev/null || break; sleep 0.1; done
  check "SIG$signal: no server left" no_server_process
  [[ $signal == INT ]] && check "SIGINT: no folder left" no_server_left
  rm -rf "$work/tmp"/refenc-*
done

# Bad values: one line naming the manifest and the field, before anything runs.
manifest "$work/bad.json" "redis://10.1.2.3"
TMPDIR="$work/tmp" "$refenc" profile "$work/bad.json" --out "$work/run-bad" --no-progress >/dev/null 2>"$work/bad.err"
rc=$?
check "remote server without a password: exit 2" [ $rc = 2 ]
check "one line naming cache.shared" grep -q "^refenc: error: $work/bad.json: cache.shared: redis://10.1.2.3:6379 is not on this host and has no password" "$work/bad.err"
check "nothing written" [ ! -e "$work/run-bad" ]
manifest "$work/pw.json" "redis://u:secret@127.0.0.1:1"
"$refenc" profile "$work/pw.json" --out "$work/run-pw" --no-progress >/dev/null 2>"$work/pw.err"
check "a password in the manifest is refused" grep -q "cache.shared: no password in a manifest" "$work/pw.err"
check "and not printed" bash -c "! grep -q secret '$work/pw.err'"
sed 's/^/     | /' "$work/fail.err" "$work/bad.err" "$work/pw.err"
finish
