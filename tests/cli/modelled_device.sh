#!/usr/bin/env bash
# Modelled devices through the CLI: `refenc models` lists the presets, `refenc calibrate` writes a
# valid calibration file (measured, or a preset with --preset) and refuses bad arguments with one
# error line, and `refenc profile` runs a manifest whose encoder is `device: "modelled"` over that
# file: its verdicts are graded "modelled device (calibration FILE, ...)", the report carries the
# calibration's digest, and a manifest without a calibration is refused.
#
#   tests/cli/modelled_device.sh path/to/refenc
set -uo pipefail
refenc=${1:?usage: modelled_device.sh REFENC}
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export REFENC_CACHE_DIR="$work/cache"
. "$(dirname "$0")/lib.sh"

# error CODE NAME ARGS...: exit CODE and exactly one "refenc: error:" line on stderr.
error() {
  local code=$1 name=$2
  shift 2
  "$refenc" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  check "$name (exit $rc, $(head -c 160 "$work/err"))" \
    test "$rc" -eq "$code" -a "$(wc -l <"$work/err")" -eq 1 -a "$(grep -c '^refenc: error: ' "$work/err")" -eq 1
}

# --- presets ----------------------------------------------------------------------------------------
"$refenc" models >"$work/models" 2>&1
check "models lists the calibration presets" grep -q '^  qwen3-tts-gpu  ' "$work/models"
check "models cites each preset's source" grep -q 'source: Qwen3-TTS .*sglang-omni PR #2172' "$work/models"
check "models lists the synthesis presets" grep -q '^  fish-s2-pro-h200 ' "$work/models"
"$refenc" models --presets --json >"$work/presets.json"
check "models --presets --json: five encoder presets" test "$(jq '.calibration_presets | length' "$work/presets.json")" -eq 5
"$refenc" calibrate --preset moss-tts-local-gpu --out "$work/moss.json" >/dev/null
check "calibrate --preset writes the preset" test "$(jq -r '.origin + " " + .source' "$work/moss.json")" = \
  "published MOSS-TTS reference encode about 0.25 s on a GPU (sglang-omni #743)"

# --- calibrate --------------------------------------------------------------------------------------
"$refenc" calibrate --model fish-s2-pro --scale tiny --threads 1 --lengths 1,2 --batch-max 2 --repeats 1 \
  --concurrency 2 --clips "$root/workloads/clips/en-m-16k.flac,$root/workloads/clips/de-m-24k.flac" \
  --out "$work/cal.json" >"$work/calibrate.out" 2>&1
check "calibrate exits 0" test $? -eq 0
check "calibrate: grid of 2 batch sizes x 2 lengths" test "$(jq -c '[.batch_sizes, .lengths_s, (.time_ms | map(length))]' "$work/cal.json")" = '[[1,2],[1,2],[2,2]]'
check "calibrate: context names host, CPU and LibTorch" test "$(jq -r '[.context.host, .context.device_name, .context.libtorch] | map(length > 0) | all' "$work/cal.json")" = true
check "calibrate: capacity measured at 1 and 2" test "$(jq -c '.sharing.capacity | map(.[0])' "$work/cal.json")" = '[1,2]'
check "calibrate: slowdown per length at 1 and 2" test "$(jq -c '.sharing.slowdown | map([.concurrency, (.factor | length)])' "$work/cal.json")" = '[[1,2],[2,2]]'
check "calibrate prints the slowdown" grep -q '^      c2 ' "$work/calibrate.out"
check "calibrate: one caller's factors are 1 (every factor is a ratio to one caller in the same pass)" \
  test "$(jq -c '.sharing.slowdown[0].factor' "$work/cal.json")" = '[1,1]'
check "calibrate: batches of 2 under load, 2 callers (the default on this host)" \
  test "$(jq -c '.sharing.batch_slowdown | map([.batch, .concurrency, (.factor | length)])' "$work/cal.json")" = '[[2,2,2]]'
check "calibrate prints the batch slowdown" grep -q '^   b2 c2 ' "$work/calibrate.out"
check "calibrate: every level and batch row has its spread, in (0, 3)" \
  test "$(jq '[.sharing.slowdown[], .sharing.batch_slowdown[]] | map(.spread > 0 and .spread < 3) | all' "$work/cal.json")" = true
check "calibrate: the source names the clips" grep -q -- '--clips .*en-m-16k.flac' <(jq -r .source "$work/cal.json")
check "calibrate: the assumptions say the content is the given clips" \
  grep -q 'cut from 2 given clip(s)' <(jq -r '.assumptions[0]' "$work/cal.json")
"$refenc" calibrate --model fish-s2-pro --scale tiny --threads 1 --lengths 1 --batch-max 2 --repeats 1 \
  --concurrency 2 --batch-concurrency 0 --out "$work/cal0.json" >/dev/null 2>&1
check "calibrate --batch-concurrency 0: no batch rows, synthetic content" \
  test "$(jq -c '[(.sharing | has("batch_slowdown")), (.assumptions[0] | test("synthetic"))]' "$work/cal0.json")" = '[false,true]'
check "calibrate: peak RSS read" test "$(jq -r '.peak_memory.kind' "$work/cal.json")" = rss
check "calibrate: no temp file left" test "$(find "$work" -name 'cal.json.*' | wc -l)" -eq 0
error 2 "calibrate: unknown preset" calibrate --preset nope --out "$work/x.json"
error 2 "calibrate: batch-max 0" calibrate --model fish-s2-pro --batch-max 0 --out "$work/x.json"
error 2 "calibrate: negative length" calibrate --model fish-s2-pro --lengths=-1 --out "$work/x.json"
error 3 "calibrate: unknown model" calibrate --model nope --out "$work/x.json"
error 2 "calibrate: a missing clip" calibrate --model fish-s2-pro --clips "$work/none.flac" --out "$work/x.json"
error 2 "calibrate: a clip that is not audio" calibrate --model fish-s2-pro --clips "$root/README.md" --out "$work/x.json"
error 2 "calibrate: batch concurrency 1" calibrate --model fish-s2-pro --batch-concurrency 1 --out "$work/x.json"
error 2 "calibrate: batch concurrency 0 in a list" calibrate --model fish-s2-pro --batch-concurrency 0,2 --out "$work/x.json"
check "calibrate: refused arguments write no file" test ! -e "$work/x.json"

# --- profile on the modelled device -------------------------------------------------------------
jq --arg cal "$work/cal.json" --arg clips "$root/workloads/" '
  .name = "modelled-smoke" | .models = [.models[0]]
  | .models[0].encoder.device = "modelled" | .models[0].encoder.calibration = $cal
  | .references.clips |= map($clips + .) | .references.variants = 16
  | .phases = [{"kind": "cold", "requests": 6, "concurrency": [2]}]
  | .arms = [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 2, "max_batch_wait_ms": 2}]' \
  "$root/workloads/smoke.json" >"$work/modelled.json"
"$refenc" profile "$work/modelled.json" --out "$work/run" >"$work/profile.out" 2>&1
rc=$?
check "profile on the modelled device completes (exit $rc)" test "$rc" -eq 0 -o "$rc" -ge 10
check "evidence grade names the calibration file" test "$(jq -r '.models[0].evidence_grade' "$work/run/report.json")" = \
  "modelled device (calibration $work/cal.json, $(jq -r .context.host "$work/cal.json"), $(jq -r .context.device_name "$work/cal.json"))"
check "report carries the calibration's digest" test "$(jq -r '.models[0].calibration.sha256' "$work/run/report.json")" = \
  "$(sha256sum "$work/cal.json" | cut -d' ' -f1)"
check "gate verdict graded modelled" grep -q 'modelled device (calibration' "$work/run/summary.md"
check "summary says encode is modelled" grep -q 'reference encode is \*\*modelled\*\*' "$work/run/summary.md"
check "page shows the grade" grep -q 'modelled device (calibration' "$work/run/report.html"
check "every request succeeded" test "$(jq -s 'map(select(.outcome == "failed")) | length' "$work/run/requests.jsonl")" -eq 0
check "artifact shapes as the real encoder's: stored bytes > 0" test "$(jq -s 'map(.stored_bytes) | min' "$work/run/requests.jsonl")" -gt 0
jq 'del(.models[0].encoder.calibration)' "$work/modelled.json" >"$work/no-cal.json"
error 2 "manifest: modelled without a calibration" profile "$work/no-cal.json" --out "$work/run2"

finish
