#!/usr/bin/env bash
# Validates the modelled device against the real encoder on this machine: calibrates Fish S2-Pro's
# tiny proxy (1 intra-op thread, sharing measured with 2 to 16 concurrent callers), then profiles
# workloads/validate-fish.json twice, once with the real encoder and once with device "modelled" over
# that calibration, and prints encode p50/p95 and throughput per arm and concurrency with the relative
# difference (modelled / real - 1). Everything lands in OUT (default runs/validate-modelled-<UTC time>):
# calibration.json, the modelled manifest, the two run folders and table.md.
#
#   scripts/validate_modelled.sh [REFENC] [OUT]      # REFENC: build/release/apps/refenc/refenc
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

"$refenc" calibrate --model fish-s2-pro --scale tiny --threads 1 --lengths 3,6,9,12 --batch-max 8 \
  --repeats 3 --concurrency 2,4,8,16 --out "$out/calibration.json"

# The same manifest on the modelled device (clip paths made absolute: the copy lives in OUT).
jq --arg cal "$out/calibration.json" --arg clips "$root/workloads/" \
  '.name += "-modelled" | .models[0].encoder.device = "modelled" | .models[0].encoder.calibration = $cal
   | .references.clips |= map($clips + .)' "$manifest" >"$out/validate-fish-modelled.json"

run() {  # run MANIFEST DIR: a gate verdict (exit 10-12) is a completed run
  local rc=0
  "$refenc" profile "$1" --out "$2" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -lt 10 ]; then
    echo "validate_modelled.sh: refenc profile $1 failed (exit $rc)" >&2
    exit 1
  fi
}
run "$manifest" "$out/real"
run "$out/validate-fish-modelled.json" "$out/modelled"

jq -r -n --slurpfile real "$out/real/report.json" --slurpfile mod "$out/modelled/report.json" \
  --argjson tol "$tolerance" '
  def cells(r): [r[0].cells[] | select(.phase == "cold")];
  def d(a; b): if a > 0 then (b / a - 1) else 0 end;
  def pct(x): ((x * 1000 | round) / 10 | tostring) + "%";
  def ms(x): (x * 1000 | round | tostring);
  def mark(x): if (x | fabs) <= $tol then "" else " **" end;
  (cells($real)) as $r | (cells($mod)) as $m
  | [ $r[] as $a | ($m[] | select(.arm == $a.arm and .concurrency == $a.concurrency)) as $b
      | { arm: $a.arm, c: $a.concurrency,
          p50: [$a.stages.encode.p50, $b.stages.encode.p50],
          p95: [$a.stages.encode.p95, $b.stages.encode.p95],
          rps: [$a.throughput_rps, $b.throughput_rps],
          batch: [($a.cache.batched_items // 0) / ([($a.cache.batches // 0), 1] | max),
                  ($b.cache.batched_items // 0) / ([($b.cache.batches // 0), 1] | max)] } ] as $rows
  | "| arm | c | encode p50 ms real / modelled (diff) | encode p95 ms real / modelled (diff) | req/s real / modelled (diff) | mean batch real / modelled |",
    "|---|---:|---:|---:|---:|---:|",
    ($rows[] | "| \(.arm) | \(.c) | \(ms(.p50[0])) / \(ms(.p50[1])) (\(pct(d(.p50[0]; .p50[1]))))\(mark(d(.p50[0]; .p50[1]))) | \(ms(.p95[0])) / \(ms(.p95[1])) (\(pct(d(.p95[0]; .p95[1]))))\(mark(d(.p95[0]; .p95[1]))) | \((.rps[0] * 100 | round) / 100) / \((.rps[1] * 100 | round) / 100) (\(pct(d(.rps[0]; .rps[1]))))\(mark(d(.rps[0]; .rps[1]))) | \((.batch[0] * 100 | round) / 100) / \((.batch[1] * 100 | round) / 100) |"),
    "",
    "\([$rows[] | (.p50, .p95, .rps) | select((d(.[0]; .[1]) | fabs) <= $tol)] | length) of \($rows | length * 3) figures within \($tol * 100)% (** marks the others)"
' | tee "$out/table.md"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/table.md"
echo "calibration, runs and table in $out"
