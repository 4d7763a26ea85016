#!/usr/bin/env bash
# Validates the modelled device against the real encoder on this machine: calibrates Fish S2-Pro's
# tiny proxy (1 intra-op thread, sharing measured with 2 to 16 concurrent callers), then profiles
# workloads/validate-fish.json three times: the real encoder, device "modelled" over that calibration,
# and the real encoder again. It prints encode p50/p95 and throughput per arm and concurrency: the
# modelled figure against the mean of the two real runs (modelled / real - 1), and the two real runs'
# drift (real2 / real1 - 1), the noise floor: where the real runs differ by more than the tolerance,
# the real encoder did not repeat itself (load, or its own variance) and that row decides nothing. Everything lands in OUT
# (default runs/validate-modelled-<UTC time>): calibration.json, the modelled manifest, the three run
# folders and table.md.
#
#   scripts/validate_modelled.sh [REFENC] [OUT]      # REFENC: build/release/apps/refenc/refenc
#
# Repeats of a cell (the manifest runs 3) are pooled: p50 and p95 over all their requests, throughput
# over their summed wall time. REUSE=1 re-judges the runs already in OUT (calibrates and profiles nothing).
#
# Needs jq. Exit status 0 when both runs completed (the table reports what agreed); 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
refenc=${1:-$root/build/release/apps/refenc/refenc}
out=${2:-runs/validate-modelled-$(date -u +%Y%m%dT%H%M%SZ)}
tolerance=${VALIDATE_TOLERANCE:-0.15}
command -v jq >/dev/null || { echo "validate_modelled.sh: jq is required" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
manifest=$root/workloads/validate-fish.json

if [ "${REUSE:-0}" != 1 ] || [ ! -f "$out/calibration.json" ]; then
  "$refenc" calibrate --model fish-s2-pro --scale tiny --threads 1 --lengths 3,6,9,12 --batch-max 8 \
    --repeats 3 --concurrency 2,4,8,16 --out "$out/calibration.json"
fi

# The same manifest on the modelled device (clip paths made absolute: the copy lives in OUT).
jq --arg cal "$out/calibration.json" --arg clips "$root/workloads/" \
  '.name += "-modelled" | .models[0].encoder.device = "modelled" | .models[0].encoder.calibration = $cal
   | .references.clips |= map($clips + .)' "$manifest" >"$out/validate-fish-modelled.json"

run() {  # run MANIFEST DIR: a gate verdict (exit 10-12) is a completed run
  if [ "${REUSE:-0}" = 1 ] && [ -f "$2/report.json" ]; then return 0; fi
  local rc=0
  "$refenc" profile "$1" --out "$2" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -lt 10 ]; then
    echo "validate_modelled.sh: refenc profile $1 failed (exit $rc)" >&2
    exit 1
  fi
}
load() { cut -d' ' -f1 /proc/loadavg; }
l0=$(load)
run "$manifest" "$out/real"
l1=$(load)
run "$out/validate-fish-modelled.json" "$out/modelled"
l2=$(load)
run "$manifest" "$out/real2"
l3=$(load)

# Per run, arm and concurrency, the cold cells' repeats pooled: nearest-rank encode p50 / p95 over every
# successful request, throughput = successful requests / summed cell wall time (as the gate pools).
pool() {  # pool RUN_DIR: JSON {"m4a/8": {p50, p95, rps}, ...}
  jq -s --slurpfile rep "$1/report.json" '
    def pct(p): sort as $x | $x[([(($x | length) * p / 100 | ceil), 1] | max) - 1];
    (reduce ($rep[0].cells[] | select(.phase == "cold")) as $c ({};
       .["\($c.arm)/\($c.concurrency)"] += {wall: ((.["\($c.arm)/\($c.concurrency)"].wall // 0) + $c.wall_s)})) as $walls
    | [ .[] | select(.outcome != "failed") | (.cell | split("/")) as $k
        | select($k[2] == "cold" and ($k | length) == 5) | {g: "\($k[1])/\($k[3][1:])", e: .encode_s} ]
    | group_by(.g) | map({key: .[0].g, value: {p50: ([.[].e] | pct(50)), p95: ([.[].e] | pct(95)),
                                            rps: (length / $walls[.[0].g].wall)}}) | from_entries' "$1/requests.jsonl"
}
pool "$out/real" >"$out/real.pooled.json"
pool "$out/real2" >"$out/real2.pooled.json"
pool "$out/modelled" >"$out/modelled.pooled.json"

jq -r -n --slurpfile r "$out/real.pooled.json" --slurpfile r2 "$out/real2.pooled.json" \
  --slurpfile m "$out/modelled.pooled.json" --argjson tol "$tolerance" '
  def d(a; b): if a > 0 then (b / a - 1) else 0 end;
  def pct(x): ((x * 1000 | round) / 10 | tostring) + "%";
  def msf: (. * 1000 | round | tostring);
  def rpsf: ((. * 100 | round) / 100 | tostring);
  def mark(x): if (x | fabs) <= $tol then "" else " **" end;
  def fig(a; b; m; f): ((a + b) / 2) as $r
    | { real: $r, mod: m, diff: d($r; m), drift: d(a; b), text: "\(a | f) / \(b | f) / \(m | f) (\(pct(d($r; m))))\(mark(d($r; m)))" };
  ($r[0] | keys | sort_by(split("/") | [(.[1] | tonumber), .[0]])) as $groups
  | [ $groups[] as $g | select($r2[0][$g] and $m[0][$g])
      | $r[0][$g] as $a | $r2[0][$g] as $a2 | $m[0][$g] as $b
      | { arm: ($g | split("/")[0]), c: ($g | split("/")[1]),
          figs: [ fig($a.p50; $a2.p50; $b.p50; msf), fig($a.p95; $a2.p95; $b.p95; msf),
                  fig($a.rps; $a2.rps; $b.rps; rpsf) ] } ] as $rows
  | "| arm | c | encode p50 ms: real 1 / real 2 / modelled (vs real mean) | encode p95 ms | req/s | real 1 vs real 2: largest drift |",
    "|---|---:|---:|---:|---:|---:|",
    ($rows[] | "| \(.arm) | \(.c) | \(.figs[0].text) | \(.figs[1].text) | \(.figs[2].text) | \(pct([.figs[].drift | fabs] | max))\(if ([.figs[].drift | fabs] | max) > $tol then " (above the tolerance: decides nothing)" else "" end) |"),
    "",
    "\([$rows[].figs[] | select((.diff | fabs) <= $tol)] | length) of \($rows | length * 3) figures within \($tol * 100)% of the real mean (** marks the others); \([$rows[] | select(([.figs[].drift | fabs] | max) <= $tol)] | length) of \($rows | length) rows had real runs within \($tol * 100)% of each other"
' | tee "$out/table.md"
echo "1-minute load average before and after each run (real 1, modelled, real 2): $l0 $l1 $l2 $l3" | tee -a "$out/table.md"
echo "calibration, runs and table in $out"
