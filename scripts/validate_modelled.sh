#!/usr/bin/env bash
# Validates the modelled device against the real encoder on this machine. Each cycle calibrates Fish
# S2-Pro's tiny proxy on the manifest's own clips (1 intra-op thread, lengths 3-12 s, batches 1-8,
# latency under load with 1 to 16 concurrent callers of single calls and with M4b's matched batch
# workers of each batch size), profiles workloads/validate-fish.json with the real encoder, then with device
# "modelled" over that cycle's calibration; a last real run closes the series. With CYCLES=1 (the
# default) that is: calibrate, real, modelled, real.
#
# It prints encode p50/p95 and throughput per arm and concurrency: each real run, every real run pooled,
# and every modelled run pooled against them (modelled / real - 1), and the largest drift between two
# real runs (max / min - 1), the noise floor: where the real runs differ by more than the tolerance,
# the real encoder did not repeat itself (load, or its own variance) and that row decides nothing.
# Pooled means every request of every repeat of every run of the kind: p50 and p95 over all of them,
# throughput over their summed cell wall time (as the gate pools repeats). Several cycles spread the
# machine's drift over both sides instead of betting on one calibration.
#
#   scripts/validate_modelled.sh [REFENC] [OUT]      # REFENC: build/release/apps/refenc/refenc
#   CYCLES=2 scripts/validate_modelled.sh            # calibrate, real, modelled, twice; then real
#   REUSE=1 scripts/validate_modelled.sh REFENC OUT  # re-judge the runs already in OUT
#
# Everything lands in OUT (default runs/validate-modelled-<UTC time>): calibration-<i>.json, the
# modelled manifests, the run folders real-<i> and modelled-<i>, and table.md. Needs jq. Exit status 0
# when every run completed (the table reports what agreed); 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
refenc=${1:-$root/build/release/apps/refenc/refenc}
out=${2:-runs/validate-modelled-$(date -u +%Y%m%dT%H%M%SZ)}
tolerance=${VALIDATE_TOLERANCE:-0.15}
cycles=${CYCLES:-1}
command -v jq >/dev/null || { echo "validate_modelled.sh: jq is required" >&2; exit 1; }
[[ $cycles =~ ^[1-9][0-9]*$ ]] || { echo "validate_modelled.sh: CYCLES: must be a whole number >= 1" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
manifest=$root/workloads/validate-fish.json
reuse=${REUSE:-0}
clips=$(jq -r --arg dir "$root/workloads/" '.references.clips | map($dir + .) | join(",")' "$manifest")

run() {  # run MANIFEST DIR: a gate verdict (exit 10-12) is a completed run
  if [ "$reuse" = 1 ] && [ -f "$2/report.json" ]; then return 0; fi
  local rc=0
  "$refenc" profile "$1" --out "$2" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -lt 10 ]; then
    echo "validate_modelled.sh: refenc profile $1 failed (exit $rc)" >&2
    exit 1
  fi
}
load() { cut -d' ' -f1 /proc/loadavg; }

loads="$(load)"
for i in $(seq 1 "$cycles"); do
  cal=$out/calibration-$i.json
  if [ "$reuse" != 1 ] || [ ! -f "$cal" ]; then
    "$refenc" calibrate --model fish-s2-pro --scale tiny --threads 1 --lengths 3,6,9,12 --batch-max 8 \
      --repeats 5 --concurrency 2,4,8,16 --clips "$clips" --out "$cal"
  fi
  # The same manifest on the modelled device (clip paths made absolute: the copy lives in OUT).
  jq --arg cal "$cal" --arg clips "$root/workloads/" \
    '.name += "-modelled" | .models[0].encoder.device = "modelled" | .models[0].encoder.calibration = $cal
     | .references.clips |= map($clips + .)' "$manifest" >"$out/validate-fish-modelled-$i.json"
  run "$manifest" "$out/real-$i"
  loads+=" $(load)"
  run "$out/validate-fish-modelled-$i.json" "$out/modelled-$i"
  loads+=" $(load)"
done
run "$manifest" "$out/real-$((cycles + 1))"
loads+=" $(load)"

# Per arm and concurrency over the given runs, every cold cell's repeats pooled: nearest-rank encode p50
# / p95 over every successful request, throughput = successful requests / summed cell wall time.
pool() {  # pool RUN_DIR...: JSON {"m4a/8": {p50, p95, rps}, ...}
  local reports=() requests=()
  for d in "$@"; do reports+=("$d/report.json") requests+=("$d/requests.jsonl"); done
  jq -n --slurpfile rows <(cat "${requests[@]}") --slurpfile reps <(cat "${reports[@]}") '
    def pct(p): sort as $x | $x[([(($x | length) * p / 100 | ceil), 1] | max) - 1];
    (reduce ($reps[].cells[] | select(.phase == "cold")) as $c ({};
       .["\($c.arm)/\($c.concurrency)"] += {wall: ((.["\($c.arm)/\($c.concurrency)"].wall // 0) + $c.wall_s)})) as $walls
    | [ $rows[] | select(.outcome != "failed") | (.cell | split("/")) as $k
        | select($k[2] == "cold" and ($k | length) == 5) | {g: "\($k[1])/\($k[3][1:])", e: .encode_s} ]
    | group_by(.g) | map({key: .[0].g, value: {p50: ([.[].e] | pct(50)), p95: ([.[].e] | pct(95)),
                                            rps: (length / $walls[.[0].g].wall)}}) | from_entries'
}
reals=() mods=()
for i in $(seq 1 $((cycles + 1))); do reals+=("$out/real-$i"); done
for i in $(seq 1 "$cycles"); do mods+=("$out/modelled-$i"); done
for d in "${reals[@]}"; do pool "$d"; done | jq -s . >"$out/real-runs.json"
pool "${reals[@]}" >"$out/real-pooled.json"
pool "${mods[@]}" >"$out/modelled-pooled.json"

jq -r -n --slurpfile runs "$out/real-runs.json" --slurpfile r "$out/real-pooled.json" \
  --slurpfile m "$out/modelled-pooled.json" --argjson tol "$tolerance" --argjson cycles "$cycles" '
  def d(a; b): if a > 0 then (b / a - 1) else 0 end;
  def pct(x): ((x * 1000 | round) / 10 | tostring) + "%";
  def msf: (. * 1000 | round | tostring);
  def rpsf: ((. * 100 | round) / 100 | tostring);
  def mark(x): if (x | fabs) <= $tol then "" else " **" end;
  def fig(g; k; f): [$runs[0][] | .[g][k]] as $each | $r[0][g][k] as $real | $m[0][g][k] as $mod
    | { diff: d($real; $mod), drift: (($each | max) / ($each | min) - 1),
        text: "\([$each[] | f] | join(" / ")) / \($real | f) / \($mod | f) (\(pct(d($real; $mod))))\(mark(d($real; $mod)))" };
  ($r[0] | keys | sort_by(split("/") | [(.[1] | tonumber), .[0]])) as $groups
  | [ $groups[] as $g | select($m[0][$g])
      | { arm: ($g | split("/")[0]), c: ($g | split("/")[1]),
          figs: [fig($g; "p50"; msf), fig($g; "p95"; msf), fig($g; "rps"; rpsf)] } ] as $rows
  | ([range(1; $cycles + 2)] | map("real \(.)") | join(" / ")) as $head
  | "| arm | c | encode p50 ms: \($head) / real pooled / modelled pooled (vs real) | encode p95 ms | req/s | largest drift between real runs |",
    "|---|---:|---:|---:|---:|---:|",
    ($rows[] | ([.figs[].drift] | max) as $dr
      | "| \(.arm) | \(.c) | \(.figs[0].text) | \(.figs[1].text) | \(.figs[2].text) | \(pct($dr))\(if $dr > $tol then " (above the tolerance: decides nothing)" else "" end) |"),
    "",
    "\([$rows[].figs[] | select((.diff | fabs) <= $tol)] | length) of \($rows | length * 3) figures within \($tol * 100)% of the pooled real runs (** marks the others); \([$rows[] | select(([.figs[].drift] | max) <= $tol)] | length) of \($rows | length) rows had real runs within \($tol * 100)% of each other; \($cycles) calibration(s), \($cycles + 1) real and \($cycles) modelled runs"
' | tee "$out/table.md"
echo "1-minute load average at the start and after each run: $loads" | tee -a "$out/table.md"
echo "calibrations, runs and table in $out"
