#!/usr/bin/env bash
# The noise checks of the profiler, on workloads/smoke.json (or MANIFEST), with one refenc binary:
#   1. back to back: RUNS consecutive profiles; `refenc compare` of the first two must flag no regression,
#      and the gate verdicts of every run must be the same;
#   2. a real slowdown: a copy of the manifest with SLOW_MODEL's synthesis step cost raised by SLOW_FACTOR
#      (default fish-s2-pro, 1.3); compared with the last back-to-back run, its E2E regressions must be
#      flagged;
#   3. a busy machine: one profile with BUSY_CMD running beside it (default: `make -j2`-like load, a
#      clean rebuild of refenc's profile libraries with ccache off, repeated); its verdicts must equal the
#      back-to-back ones or be INCONCLUSIVE for contamination, never another decisive verdict.
# Prints one line per check (ok / FAIL) and a summary; the runs stay under OUT for inspection.
#
#   scripts/noise_check.sh                            # build/release/apps/refenc/refenc, OUT=runs/noise-check-<time>
#   RUNS=3 NO_BUSY=1 scripts/noise_check.sh           # skip check 3
#   REFENC=path/to/refenc MANIFEST=workloads/smoke.json OUT=/tmp/nc scripts/noise_check.sh
#   REUSE=1 OUT=/tmp/nc scripts/noise_check.sh          # judge the runs already in OUT again, profile nothing
# On a busy machine every cell is contaminated and compare judges none of them (it says so): check 2
# then needs an idle machine, or COMPARE_ARGS=--judge-contaminated to see what the noise floor alone does.
set -uo pipefail
cd "$(dirname "$0")/.."
REFENC=${REFENC:-build/release/apps/refenc/refenc}
MANIFEST=${MANIFEST:-workloads/smoke.json}
RUNS=${RUNS:-3}
SLOW_MODEL=${SLOW_MODEL:-fish-s2-pro}
SLOW_FACTOR=${SLOW_FACTOR:-1.3}
OUT=${OUT:-runs/noise-check-$(date -u +%Y%m%d-%H%M%S)}
NO_BUSY=${NO_BUSY:-0}
COMPARE_ARGS=${COMPARE_ARGS:-}  # e.g. --judge-contaminated on a machine that is never idle
BUSY_BUILD=${BUSY_BUILD:-build/noise-busy}
passed=0
failed=0
mkdir -p "$OUT"

check() {  # check NAME CONDITION-EXIT-STATUS DETAIL
  if [ "$2" -eq 0 ]; then
    passed=$((passed + 1))
    printf 'ok   %-58s %s\n' "$1" "$3"
  else
    failed=$((failed + 1))
    printf 'FAIL %-58s %s\n' "$1" "$3"
  fi
}

profile() {  # profile MANIFEST DIR: gate verdicts (exit 0, 10, 11, 12) count as a completed run
  if [ "${REUSE:-0}" = 1 ] && [ -f "$2/report.json" ]; then return 0; fi
  local start=$SECONDS
  "$REFENC" profile "$1" --out "$2" --no-progress >"$2.log" 2>&1
  local rc=$?
  echo "  $(basename "$2"): exit $rc, $((SECONDS - start)) s" >&2
  case $rc in 0 | 10 | 11 | 12) return 0 ;; *) cat "$2.log" >&2; return 1 ;; esac
}

verdicts() {  # verdicts RUN: "model=VERDICT ..." from report.json
  python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/report.json"))["gate"]
print(" ".join(m["model"]+"="+m["verdict"] for m in g["models"]))' "$1"
}

contaminated_models() {  # models whose verdict rests on contaminated cells
  python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/report.json"))["gate"]
print(" ".join(m["model"] for m in g["models"] if m.get("contaminated")))' "$1"
}

[ -x "$REFENC" ] || { echo "noise_check: $REFENC: not built (cmake --build build/release --target refenc)" >&2; exit 2; }
echo "noise check: $MANIFEST, $RUNS back-to-back runs, into $OUT; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. Back to back.
for i in $(seq 1 "$RUNS"); do profile "$MANIFEST" "$OUT/run$i" || exit 1; done
"$REFENC" compare $COMPARE_ARGS "$OUT/run1" "$OUT/run2" >"$OUT/compare-run1-run2.txt" 2>&1
rc=$?
check "back to back: compare run1 run2 flags no regression" $((rc != 0)) \
  "exit $rc, $(tail -1 "$OUT/compare-run1-run2.txt")"
if [ "$RUNS" -ge 2 ]; then
  base=()
  cur=()
  for i in $(seq 1 "$RUNS"); do [ $((i % 2)) -eq 1 ] && base+=("$OUT/run$i") || cur+=("$OUT/run$i"); done
  "$REFENC" compare $COMPARE_ARGS --baseline "${base[@]}" --current "${cur[@]}" >"$OUT/compare-odd-even.txt" 2>&1
  rc=$?
  check "back to back: compare odd runs with even runs, no regression" $((rc != 0)) \
    "exit $rc, $(tail -1 "$OUT/compare-odd-even.txt")"
fi
first=$(verdicts "$OUT/run1")
same=0
for i in $(seq 1 "$RUNS"); do
  v=$(verdicts "$OUT/run$i")
  echo "  run$i verdicts: $v; contaminated: $(contaminated_models "$OUT/run$i")"
  [ "$v" = "$first" ] || same=1
done
check "the gate gives the same verdicts over $RUNS runs" $same "$first"

# 2. The synthesis step cost of one model raised.
slow="$OUT/slow.json"
python3 - "$MANIFEST" "$slow" "$SLOW_MODEL" "$SLOW_FACTOR" <<'PY'
import json, os, sys
src, dst, model, factor = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
m = json.load(open(src))
base = os.path.dirname(os.path.abspath(src))
refs = m["references"]
refs["clips"] = [os.path.join(base, c) for c in refs["clips"]]
if refs.get("trace"): refs["trace"] = os.path.join(base, refs["trace"])
hit = [x for x in m["models"] if x["name"] == model]
if not hit: sys.exit(f"noise_check: {src}: no model {model}")
s = hit[0]["synthesis"]
for k in ("step_base_ms", "step_per_active_ms"):
    s[k] = s.get(k, {"step_base_ms": 15, "step_per_active_ms": 0.5}[k]) * factor
m["name"] = m["name"] + "-slow"
json.dump(m, open(dst, "w"), indent=1)
PY
profile "$slow" "$OUT/slow" || exit 1
"$REFENC" compare $COMPARE_ARGS "$OUT/run$RUNS" "$OUT/slow" >"$OUT/compare-slow.txt" 2>&1
rc=$?
flagged=$(grep -c "^$SLOW_MODEL/.* p95_e2e .*REGRESSION" "$OUT/compare-slow.txt")
others=$(grep "REGRESSION" "$OUT/compare-slow.txt" | grep -vc "^$SLOW_MODEL/")
check "synthesis step cost x$SLOW_FACTOR: $SLOW_MODEL E2E regressions flagged" $((rc != 10 || flagged == 0)) \
  "exit $rc, $flagged $SLOW_MODEL p95_e2e regressions, $others in other models"

# 3. A busy machine.
if [ "$NO_BUSY" != 1 ] && [ "${REUSE:-0}" = 1 ] && [ -f "$OUT/busy/report.json" ]; then
  busy_done=1
fi
if [ "$NO_BUSY" != 1 ] && [ -z "${busy_done:-}" ]; then
  if [ -z "${BUSY_CMD:-}" ]; then
    cmake -S . -B "$BUSY_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREFENC_LAYERS=profile -DREFENC_APP=OFF \
      >"$OUT/busy-configure.log" 2>&1 || { echo "noise_check: cannot configure $BUSY_BUILD" >&2; exit 1; }
    BUSY_CMD="while :; do CCACHE_DISABLE=1 cmake --build $BUSY_BUILD -j2 --clean-first --target refenc_profile_run >/dev/null 2>&1; done"
  fi
  setsid bash -c "$BUSY_CMD" >"$OUT/busy.log" 2>&1 &
  busy=$!
  profile "$MANIFEST" "$OUT/busy"
  kill -- -"$busy" 2>/dev/null
  wait "$busy" 2>/dev/null
fi
if [ "$NO_BUSY" != 1 ]; then
  bad=0
  detail=""
  for mv in $(verdicts "$OUT/busy"); do
    model=${mv%%=*}
    verdict=${mv#*=}
    want=$(tr ' ' '\n' <<<"$first" | grep "^$model=" | cut -d= -f2)
    if [ "$verdict" != "$want" ]; then
      if [ "$verdict" = INCONCLUSIVE ] && tr ' ' '\n' <<<"$(contaminated_models "$OUT/busy")" | grep -qx "$model"; then
        detail+="$model INCONCLUSIVE (contaminated; idle $want) "
      else
        bad=1
        detail+="$model $verdict (idle $want) "
      fi
    else
      detail+="$model $verdict "
    fi
  done
  check "busy machine: same verdicts or INCONCLUSIVE for contamination" $bad "$detail"
fi
echo "$passed passed, $failed failed (runs in $OUT)"
[ "$failed" -eq 0 ]
