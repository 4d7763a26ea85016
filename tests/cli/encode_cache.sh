#!/usr/bin/env bash
# `refenc encode` and the persistent cache from the shell: the default root is used without flags
# (a second run reads the entry from disk), --no-cache skips it, four processes started together on
# one clip encode it once, --out writes .pt (a torch archive: the disk entry's bytes) or .json and
# refuses any other extension, `cache gc` deletes stale lock files, `voice add --max-voices` refuses
# a voice past the cap. Everything is written under a temporary root: REFENC_CACHE_DIR is set, so the
# real ~/.cache is never touched.
#
#   tests/cli/encode_cache.sh path/to/refenc
set -uo pipefail
refenc=${1:?usage: encode_cache.sh REFENC}
clip="$(cd "$(dirname "$0")/../.." && pwd)/workloads/clips/en-m-16k.flac"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export REFENC_CACHE_DIR="$work/cache"
export HOME="$work/home"  # a fallback to the home cache would show up here
unset XDG_CACHE_HOME
. "$(dirname "$0")/lib.sh"

from() { sed -n 's/^request 1  from \([a-z]*\).*/\1/p' "$1"; }

# --- the default root ---------------------------------------------------------------------------
"$refenc" encode "$clip" --model fish-s2-pro >"$work/first" 2>"$work/err1"
"$refenc" encode "$clip" --model fish-s2-pro >"$work/second" 2>"$work/err2"
check "first run encodes" [ "$(from "$work/first")" = encoded ]
check "second run: from disk (default root)" [ "$(from "$work/second")" = disk ]
check "entry under \$REFENC_CACHE_DIR" [ "$(find "$work/cache/v1" -name '*.pt' | wc -l)" -eq 1 ]
"$refenc" encode "$clip" --model fish-s2-pro --no-cache >"$work/nocache" 2>&1
check "--no-cache encodes" [ "$(from "$work/nocache")" = encoded ]
"$refenc" encode "$clip" --model fish-s2-pro --cache-dir "$work/other" >"$work/other1" 2>&1
"$refenc" encode "$clip" --model fish-s2-pro --cache-dir "$work/other" >"$work/other2" 2>&1
check "--cache-dir DIR: encoded, then disk" [ "$(from "$work/other1")/$(from "$work/other2")" = encoded/disk ]
"$refenc" encode "$clip" --model fish-s2-pro --no-cache --cache-dir "$work/x" >/dev/null 2>&1
check "--no-cache with --cache-dir is refused" [ $? -ne 0 ]

# --- four processes at once ---------------------------------------------------------------------
"$refenc" cache clear >/dev/null
for i in 1 2 3 4; do
  "$refenc" encode "$clip" --model fish-s2-pro >"$work/p$i" 2>"$work/p$i.err" &
done
wait
outcomes=$(for i in 1 2 3 4; do from "$work/p$i"; done | sort | tr '\n' ' ')
echo "     four processes: $outcomes"
check "four processes: one encoded, three disk" [ "$outcomes" = "disk disk disk encoded " ]
check "no lock file left" [ "$(find "$work/cache" -name '*.lock' | wc -l)" -eq 0 ]

# --- --out -----------------------------------------------------------------------------------------
"$refenc" encode "$clip" --model fish-s2-pro --out "$work/a.pt" >"$work/outpt" 2>&1
digest=$(sed -n 's/^key        \([0-9a-f]*\)$/\1/p' "$work/outpt")
entry=$(find "$work/cache/v1" -name "$digest.pt")
check "--out a.pt is the disk entry's bytes" cmp -s "$work/a.pt" "$entry"
if python3 -c "import torch" 2>/dev/null; then
  check "torch.load(a.pt, weights_only=True)" python3 - "$work/a.pt" <<'PY'
import sys, torch
d = torch.load(sys.argv[1], weights_only=True)
assert set(d) == {"format", "key", "tensors", "meta", "checksum"}, d.keys()
assert all(isinstance(t, torch.Tensor) for t in d["tensors"].values())
assert d["tensors"]["codes"].dtype == torch.int16
PY
else
  echo "skip torch.load(a.pt, weights_only=True): python3 has no torch (tests/store checks entries with it)"
  # The same bytes as the entry, which `cache verify` opens with LibTorch's reader.
  check "cache verify reads the entry a.pt equals" grep -q '1 ok, 0 corrupt' <("$refenc" cache verify)
fi
"$refenc" encode "$clip" --model fish-s2-pro --out "$work/a.json" >/dev/null 2>&1
check "--out a.json is JSON" python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert 'tensors' in j" "$work/a.json"
"$refenc" encode "$clip" --model fish-s2-pro --out "$work/a.npz" >"$work/out" 2>"$work/err"
rc=$?
check "--out a.npz: exit 2, one error line naming the extension, nothing written" \
  [ $rc -eq 2 -a "$(wc -l <"$work/err")" -eq 1 -a ! -s "$work/out" -a ! -e "$work/a.npz" ]
grep -q "^refenc: error: $work/a.npz: unknown extension '.npz'" "$work/err" || { failed=$((failed + 1)); echo "FAIL wrong message: $(cat "$work/err")"; }

# --- gc and lock files -------------------------------------------------------------------------------
lock="${entry%.pt}.lock"
: >"$lock"  # what a killed leader leaves
mkdir -p "$work/cache/v1/fish-s2-pro/zz" && : >"$work/cache/v1/fish-s2-pro/zz/zz00.lock"
check "stats count entries only" grep -q '^entries    1 ' <("$refenc" cache stats)
check "verify reads entries only" grep -q 'checked    1 entries: 1 ok' <("$refenc" cache verify)
check "gc deletes stale lock files" grep -q 'cleaned    2 stale lock files' <("$refenc" cache gc)
"$refenc" cache stats --prometheus >"$work/prom"
check "stats --prometheus: the entry as a gauge per model" \
  grep -qx "refenc_disk_model_entries{root=\"$work/cache\",model=\"fish-s2-pro\"} 1" "$work/prom"
check "stats --prometheus: each family declared once, every sample after its TYPE" awk '
  /^# TYPE / { if (seen[$3]++) exit 1; type = $3; next }
  /^# HELP / { next }
  { split($1, n, "{"); if (n[1] != type) exit 1 }' "$work/prom"
check "gc keeps the entry" [ -f "$entry" -a ! -e "$lock" ]
"$refenc" encode "$clip" --model fish-s2-pro >"$work/after" 2>&1
check "after gc: from disk" [ "$(from "$work/after")" = disk ]

# --- voice cap -----------------------------------------------------------------------------------------
"$refenc" voice add alice "$clip" --model fish-s2-pro --max-voices 1 >/dev/null 2>&1
check "voice add within the cap" [ $? -eq 0 ]
"$refenc" voice add Alice "$clip" --model fish-s2-pro --version 2 --max-voices 1 >/dev/null 2>&1
check "a new version of a registered voice is within the cap" [ $? -eq 0 ]
"$refenc" voice add bob "$clip" --model fish-s2-pro --max-voices 1 >"$work/out" 2>"$work/err"
rc=$?
check "voice add past the cap: exit 2, one line, nothing on stdout" \
  [ $rc -eq 2 -a "$(wc -l <"$work/err")" -eq 1 -a ! -s "$work/out" ]
check "cap message" grep -qx 'refenc: error: voice cap reached: 1 registered voices (max_voices 1)' "$work/err"
check "nothing written under \$HOME" [ ! -e "$work/home" ]

finish
