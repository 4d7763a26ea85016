#!/usr/bin/env bash
# `refenc profile` driving a Python hook: a manifest encoder {"python": "torchscript_hook:make_hook"}
# (python/examples) over a TorchScript module made here runs cold, warm and warm-disk cells with M4a
# and M4b in the embedded interpreter; every request completes, warm-disk requests are disk hits,
# the report names the hook; a bad "python" value and a factory that raises are one error line each.
#
#   tests/cli/python_hook.sh path/to/refenc       (exit 77: python3-torch not installed, skipped)
set -uo pipefail
refenc=${1:?usage: python_hook.sh REFENC}
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "SKIP: python3-torch not installed (scripts/setup.sh --test)"; exit 77; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"

cat >"$work/make_module.py" <<'PY'  # torch.jit.script reads the class's source from its file
import sys, torch
class FishCodes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Parameter(torch.randn(10, 2048, generator=torch.Generator().manual_seed(7)), requires_grad=False)
    def forward(self, wave):
        n = wave.size(2)
        t = (n + 2047) // 2048
        frames = torch.nn.functional.pad(wave.reshape(-1), [0, t * 2048 - n]).reshape(t, 2048)
        return torch.remainder((frames @ self.proj.t()).abs().mul(1000.0).long(), 1024).t().unsqueeze(0)
torch.jit.save(torch.jit.script(FishCodes()), sys.argv[1])
PY
/usr/bin/python3 "$work/make_module.py" "$work/fish.pt" || { echo "FAIL cannot make the TorchScript module"; exit 1; }
# manifest FILE PYTHON [ARGS-JSON]
manifest() {
  /usr/bin/python3 - "$@" "$root" "$work" <<'PY'
import json, sys
path, target, args, root, work = sys.argv[1:6]
enc = {"python": target, "python_path": [f"{root}/python/examples"],
       "python_args": json.loads(args or "{}") or {"module": f"{work}/fish.pt", "model": "fish-s2-pro", "threads": 1}}
clips = f"{root}/workloads/clips"
json.dump({"schema_version": 1, "name": "python-hook", "seed": 5,
           "models": [{"name": "fish-s2-pro", "encoder": enc,
                       "synthesis": {"source": "test figures", "step_base_ms": 1, "steps_per_audio_second": 5}}],
           "references": {"clips": [f"{clips}/en-m-44k.flac", f"{clips}/de-m-24k.flac"], "variants": 8, "warmup": 1},
           "texts": ["Hello there."], "concurrency": [2],
           "phases": [{"kind": "cold", "requests": 4}, {"kind": "warm", "requests": 4, "distinct": 2},
                      {"kind": "warm-disk", "requests": 4, "distinct": 4}],
           "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 4, "max_batch_wait_ms": 20}]}, open(path, "w"))
PY
}

manifest "$work/ok.json" torchscript_hook:make_hook ""
"$refenc" profile "$work/ok.json" --out "$work/run" --no-progress >"$work/ok.out" 2>"$work/ok.err"
rc=$?
check "profile over the Python hook completes (gate codes only)" bash -c "[[ $rc == 0 || $rc == 10 || $rc == 11 || $rc == 12 ]]"
sed 's/^/     | /' "$work/ok.err" | head -5
/usr/bin/python3 - "$work/run" >"$work/ok.check" 2>&1 <<'PY'
import json, sys
report = json.load(open(f"{sys.argv[1]}/report.json"))
model = report["models"][0]
assert model["evidence_grade"] == "python hook torchscript_hook:make_hook", model["evidence_grade"]
assert model["encoder"]["python"] == "torchscript_hook:make_hook", model["encoder"]
assert model["can_encode_batch"] and model["sample_rate"] == 44100, model
for cell in report["cells"]:
    assert "failed" not in cell["outcomes"], (cell["id"], cell["outcomes"])
    if cell["phase"] == "warm-disk":
        assert cell["outcomes"] == {"disk_hit": 4}, (cell["id"], cell["outcomes"])
    if cell["phase"] == "warm":
        assert set(cell["outcomes"]) <= {"hit", "merged"}, (cell["id"], cell["outcomes"])
m4b_cold = [c for c in report["cells"] if c["phase"] == "cold" and c["arm"] == "m4b"]
assert m4b_cold and all(c["parity"]["checked"] > 0 and c["parity"]["identical"] == c["parity"]["checked"]
                        for c in m4b_cold), [c["parity"] for c in m4b_cold]
print("cells", len(report["cells"]))
PY
check "every request completes; warm-disk cells are disk hits; the report names the hook" [ $? = 0 ]
sed 's/^/     | /' "$work/ok.check"

manifest "$work/bad.json" "not a target" ""
"$refenc" profile "$work/bad.json" --out "$work/bad" --no-progress >"$work/bad.out" 2>"$work/bad.err"
check "a bad python value: exit 2" [ $? = 2 ]
check "  one line naming the field" grep -q 'models\[0\].encoder.python:.*module:factory' "$work/bad.err"

manifest "$work/raise.json" torchscript_hook:make_hook '{"module": "/nonexistent.pt"}'
"$refenc" profile "$work/raise.json" --out "$work/raise" --no-progress >"$work/raise.out" 2>"$work/raise.err"
rc=$?
check "a factory that raises: non-zero exit" [ $rc != 0 ]
check "  one line with the hook's exception" grep -q "ValueError: module '/nonexistent.pt': no such file" "$work/raise.err"
sed 's/^/     | /' "$work/raise.err" | head -3
finish
