#!/usr/bin/env bash
# Hostile input through the CLI: each broken clip or manifest must give exactly one line on stderr,
# "refenc: error: <input>: <reason>", nothing on stdout, the documented exit code, and a peak memory
# that does not grow with what the input claims (oversized files and headers are refused from their
# size, before anything is read or allocated).
#
#   tests/cli/hostile_inputs.sh path/to/refenc
set -uo pipefail
refenc=${1:?usage: hostile_inputs.sh REFENC}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export REFENC_CACHE_DIR="$work/cache"
. "$(dirname "$0")/lib.sh"
max_rss_kb=0

# expect CODE NAME ARGS...: runs refenc, checks exit code, one stderr line, empty stdout, peak RSS.
expect() {
  local code=$1 name=$2
  shift 2
  /usr/bin/time -f '%M' -o "$work/rss" "$refenc" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  local lines rss
  lines=$(wc -l <"$work/err")
  rss=$(tail -n 1 "$work/rss")
  if [[ $rc -eq $code && $lines -eq 1 && ! -s "$work/out" ]] && grep -q '^refenc: error: ' "$work/err"; then
    passed=$((passed + 1))
    printf 'ok   %-34s exit %d  %6d KB  %s\n' "$name" "$rc" "$rss" "$(cat "$work/err")"
  else
    failed=$((failed + 1))
    printf 'FAIL %-34s exit %d (want %d), %d stderr lines, stdout %d bytes\n' "$name" "$rc" "$code" "$lines" \
      "$(wc -c <"$work/out")"
    sed 's/^/     | /' "$work/err" | head -5
  fi
  ((rss > max_rss_kb)) && max_rss_kb=$rss
}

# --- audio ----------------------------------------------------------------------------------------
printf 'hello, this is text and not audio\n' >"$work/text.wav"
: >"$work/empty.wav"
head -c 3000 /dev/urandom >"$work/garbage.flac"
# A WAV header announcing 200 channels and 4 GiB of data, with 64 bytes behind it.
python3 - "$work" <<'PY'
import struct, sys
d = sys.argv[1]
def wav(path, channels, rate, bits, data_len, payload):
    fmt = struct.pack('<HHIIHH', 1, channels, rate, rate * channels * bits // 8, channels * bits // 8, bits)
    body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt + b'data' + struct.pack('<I', data_len) + payload
    open(path, 'wb').write(b'RIFF' + struct.pack('<I', 0xFFFFFFF0) + body)
wav(d + '/channels.wav', 200, 16000, 16, 0xFFFFFFF0, b'\0' * 64)
wav(d + '/zero-rate.wav', 1, 0, 16, 32000, b'\0' * 32000)
wav(d + '/huge-header.wav', 1, 16000, 16, 0xFFFFFFF0, b'\0' * 64000)
wav(d + '/short.wav', 1, 16000, 16, 320, b'\0' * 320)
# 2 minutes of silence: longer than the 100 s limit.
wav(d + '/long.wav', 1, 8000, 16, 8000 * 2 * 120, b'\0' * (8000 * 2 * 120))
# A truncated copy of a valid 1 s clip.
import math
pcm = b''.join(struct.pack('<h', int(8000 * math.sin(i / 10))) for i in range(16000))
wav(d + '/truncated.wav', 1, 16000, 16, len(pcm), pcm[:100])
PY
truncate -s 200M "$work/oversized.wav"   # sparse: refused from its size, never read
mkdir -p "$work/folder.wav"

expect 2 "text renamed .wav" encode "$work/text.wav" --model fish-s2-pro
expect 2 "empty file" encode "$work/empty.wav" --model fish-s2-pro
expect 2 "random bytes" encode "$work/garbage.flac" --model qwen3-tts
expect 2 "200 channels, 4 GiB header" encode "$work/channels.wav" --model fish-s2-pro
expect 2 "0 Hz" encode "$work/zero-rate.wav" --model fish-s2-pro
expect 2 "10 ms clip" encode "$work/short.wav" --model fish-s2-pro
expect 2 "over 100 s" encode "$work/long.wav" --model moss-tts-local
expect 2 "truncated data" encode "$work/truncated.wav" --model fish-s2-pro
expect 2 "200 MB file" encode "$work/oversized.wav" --model fish-s2-pro
expect 2 "a folder" encode "$work/folder.wav" --model fish-s2-pro
expect 2 "missing file" encode "$work/missing.wav" --model fish-s2-pro
expect 2 "URL" encode "https://example.com/a.wav" --model fish-s2-pro
expect 2 "malformed data URI" encode "data:audio/wav;base64,@@@@" --model fish-s2-pro
expect 2 "data URI of text" encode "data:audio/wav;base64,aGVsbG8gd29ybGQ=" --model fish-s2-pro
expect 3 "unknown model" encode "$work/text.wav" --model nope
expect 3 "unknown scale" encode "$work/text.wav" --model fish-s2-pro --scale huge

# --- manifests ------------------------------------------------------------------------------------
printf '{"name": "x", ' >"$work/truncated.json"
printf '[1, 2, 3]\n' >"$work/array.json"
printf '{"schema_version": 1, "name": 3}\n' >"$work/name-type.json"
cat >"$work/bad-concurrency.json" <<'JSON'
{"schema_version": 1, "name": "x", "models": [{"name": "fish-s2-pro"}],
 "references": {"clips": ["a.flac"]}, "concurrency": [0]}
JSON
# Two manifests that are valid but for one field, derived from the shipped smoke workload.
python3 - "$work" "$(dirname "$0")/../../workloads/smoke.json" <<'PY'
import json, sys
work, smoke = sys.argv[1], sys.argv[2]
m = json.load(open(smoke))
import os
base = os.path.dirname(os.path.abspath(smoke))
m["references"]["clips"] = [os.path.join(base, c) for c in m["references"]["clips"]]
a = json.loads(json.dumps(m)); a["models"][0]["name"] = "nope"
json.dump(a, open(work + "/unknown-model.json", "w"))
b = json.loads(json.dumps(m)); b["references"]["clips"] = ["nowhere.flac"]
json.dump(b, open(work + "/missing-clip.json", "w"))
c = json.loads(json.dumps(m)); c["models"][1]["encoder"]["scale"] = "huge"
json.dump(c, open(work + "/bad-scale.json", "w"))
d = json.loads(json.dumps(m)); d["capacity"] = {"slo": {"ttfa_ms": 500, "e2e_ms": 2000}, "rates": [4, 0]}
json.dump(d, open(work + "/bad-rate.json", "w"))
e = json.loads(json.dumps(m)); e["capacity"] = {"slo": {"ttfa_ms": -1, "e2e_ms": 2000}, "rates": "auto"}
json.dump(e, open(work + "/bad-slo.json", "w"))
d = json.loads(json.dumps(m)); d["aa"] = ["m5"]
json.dump(d, open(work + "/bad-aa.json", "w"))
e = json.loads(json.dumps(m)); e["repeats"] = 3; e["stopping"] = {"max_repeats": 2, "target_width": 0.1}
json.dump(e, open(work + "/bad-stopping.json", "w"))
f = json.loads(json.dumps(m)); f["contamination"] = {"max_steal_share": 2}
json.dump(f, open(work + "/bad-contamination.json", "w"))
PY
expect 2 "manifest: truncated JSON" profile "$work/truncated.json" --out "$work/run1"
expect 2 "manifest: not an object" profile "$work/array.json" --out "$work/run2"
expect 2 "manifest: wrong field type" profile "$work/name-type.json" --out "$work/run3"
expect 2 "manifest: concurrency 0" profile "$work/bad-concurrency.json" --out "$work/run4"
expect 2 "manifest: unknown model" profile "$work/unknown-model.json" --out "$work/run5"
expect 2 "manifest: missing clip" profile "$work/missing-clip.json" --out "$work/run6"
expect 2 "manifest: unknown scale" profile "$work/bad-scale.json" --out "$work/run8"
expect 2 "manifest: missing file" profile "$work/absent.json" --out "$work/run7"
expect 2 "manifest: capacity rate 0" profile "$work/bad-rate.json" --out "$work/run9"
expect 2 "manifest: capacity SLO < 0" profile "$work/bad-slo.json" --out "$work/run10"
expect 2 "manifest: unknown A/A arm" profile "$work/bad-aa.json" --out "$work/run11"
expect 2 "manifest: max_repeats < repeats" profile "$work/bad-stopping.json" --out "$work/run12"
expect 2 "manifest: steal share over 1" profile "$work/bad-contamination.json" --out "$work/run13"
expect 2 "gate: not a report" gate "$work/array.json"
baseline="$(dirname "$0")/../../reports/baseline"
expect 2 "compare: both argument forms" compare "$baseline" "$baseline" --baseline "$baseline"
expect 2 "compare: no current run" compare --baseline "$baseline"
expect 2 "compare: min-runs below 2" compare "$baseline" "$baseline" --min-runs 1
expect 2 "compare: floor confidence outside (0, 1)" compare "$baseline" "$baseline" --floor-confidence 1
expect 2 "compare: a current run missing" compare --baseline "$baseline" --current "$work/absent-run"

# A run that lost a profiled concurrency level of an eligible model: MISSING_ARM (exit 12) naming the
# missing cells, never a verdict from the levels that remain.
python3 - "$(dirname "$0")/../../reports/baseline" "$work/lost-c16" <<'PY'
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
lost = lambda model, phase, conc: model == "fish-s2-pro" and phase == "cold" and conc == 16
r = json.load(open(src + "/report.json"))
r["cells"] = [c for c in r["cells"] if not lost(c["model"], c["phase"], c["concurrency"])]
json.dump(r, open(dst + "/report.json", "w"))
with open(dst + "/requests.jsonl", "w") as out:
    for line in open(src + "/requests.jsonl"):
        if not json.loads(line)["cell"].startswith(("fish-s2-pro/m4a/cold/c16/", "fish-s2-pro/m4b/cold/c16/")):
            out.write(line)
PY
"$refenc" gate "$work/lost-c16" >"$work/out" 2>"$work/err"
rc=$?
if [[ $rc -eq 12 && ! -s "$work/err" ]] && grep -q 'fish-s2-pro *MISSING_ARM' "$work/out" &&
    grep -q 'fish-s2-pro/m4a/cold/c16' "$work/out" && grep -q 'fish-s2-pro/m4b/cold/c16' "$work/out"; then
  passed=$((passed + 1))
  printf 'ok   %-34s exit %d  names fish-s2-pro/m4a/cold/c16 and m4b\n' "gate: a profiled level lost" "$rc"
else
  failed=$((failed + 1))
  printf 'FAIL %-34s exit %d (want 12)\n' "gate: a profiled level lost" "$rc"
  sed 's/^/     | /' "$work/out" "$work/err" | head -8
fi

# A header that announces more data than the file holds (as streamed recordings do) decodes what is
# there, without allocating what the header claims.
if /usr/bin/time -f '%M' -o "$work/rss" "$refenc" encode "$work/huge-header.wav" --model moss-tts-local \
    >"$work/out" 2>"$work/err" && grep -q 'codes int64\[25, 32\]' "$work/out"; then
  passed=$((passed + 1))
  printf 'ok   %-34s exit 0  %6d KB  decoded the 2 s present\n' "header claims 4 GiB, 2 s present" "$(tail -n 1 "$work/rss")"
else
  failed=$((failed + 1))
  echo "FAIL header claims 4 GiB, 2 s present"
  sed 's/^/     | /' "$work/err" | head -5
fi

echo "peak RSS of any case: $max_rss_kb KB"
# LibTorch alone is ~170 MB resident; nothing may scale with the 200 MB file or the 4 GiB headers.
if ((max_rss_kb > 400000)); then
  echo "FAIL peak RSS $max_rss_kb KB > 400000 KB"
  failed=$((failed + 1))
fi
finish
