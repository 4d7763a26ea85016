#!/usr/bin/env bash
# `refenc encode --checkpoint` from the shell: the fixture checkpoint made by fish-speech's own code
# (tests/encoders/fixtures/fish-s2-pro) gives upstream's codes, the report names the checkpoint, `--out
# FILE.npy` writes the codes as fish-speech reads precomputed reference codes (`--prompt-tokens`:
# `torch.from_numpy(np.load(path))`), `--prompt` writes each model's own precomputed-reference file (read back
# as that project reads it), and a bad checkpoint is one error line with exit 2.
#
#   tests/cli/checkpoint.sh path/to/refenc
set -uo pipefail
refenc=${1:?usage: checkpoint.sh REFENC}
fixtures="$(cd "$(dirname "$0")/../.." && pwd)/tests/encoders/fixtures/fish-s2-pro"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export REFENC_CACHE_DIR="$work/cache"
. "$(dirname "$0")/lib.sh"

ckpt=(--model fish-s2-pro --checkpoint "$fixtures/codec.pth" --scale tiny --threads 1)
"$refenc" encode "$fixtures/fr-f-44k.wav" "${ckpt[@]}" --out "$work/codes.npy" >"$work/out" 2>"$work/err"
check "encode with --checkpoint exits 0" [ $? -eq 0 ]
check "the report names the checkpoint" grep -q "^weights    checkpoint $fixtures/codec.pth (revision checkpoint:" "$work/out"
check "its key's revision is the checkpoint's digest" grep -q "revision checkpoint:$(sha256sum "$fixtures/codec.pth" | cut -c1-64)" "$work/out"
"$refenc" encode "$fixtures/fr-f-44k.wav" "${ckpt[@]}" --out "$work/codes.json" >/dev/null 2>&1
read_back=$(/usr/bin/python3 - "$work/codes.npy" "$work/codes.json" "$fixtures/expected.safetensors" <<'PY'
import json, struct, sys
import numpy as np
import torch
codes = torch.from_numpy(np.load(sys.argv[1])).to("cpu").long()   # as fish-speech's --prompt-tokens does
ours = json.load(open(sys.argv[2]))["tensors"]["codes"]
with open(sys.argv[3], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
e = header["fr-f-44k.codes"]
b, end = e["data_offsets"]
want = torch.from_numpy(np.frombuffer(data[b:end], dtype="<i8").copy()).view(*e["shape"])
ok = codes.dtype == torch.int64 and list(codes.shape) == e["shape"] == ours["shape"] \
    and torch.equal(codes, want) and codes.flatten().tolist() == ours["values"]
print("ok" if ok else f"mismatch {codes.shape} {codes.dtype}")
PY
)
check ".npy read back by numpy equals upstream's codes and the JSON's" [ "$read_back" = ok ]

"$refenc" encode "$fixtures/fr-f-44k.wav" --model qwen3-tts --out "$work/x.npy" >/dev/null 2>"$work/qerr"
check ".npy of a two-tensor artifact is refused (exit 2)" [ $? -eq 2 ]
check "  naming the file" grep -q "x.npy: .npy holds one tensor" "$work/qerr"

# --prompt: the file each project's own code reads for a precomputed reference.
"$refenc" encode "$fixtures/fr-f-44k.wav" "${ckpt[@]}" --prompt "$work/prompt.npy" >/dev/null 2>&1
check "fish --prompt FILE.npy is the --out .npy file" cmp -s "$work/prompt.npy" "$work/codes.npy"
qwen_fixtures="$(dirname "$fixtures")/qwen3-tts"
qwen=(--model qwen3-tts --checkpoint "$qwen_fixtures" --scale tiny --threads 1)
"$refenc" encode "$fixtures/fr-f-44k.wav" "${qwen[@]}" --text "Bonjour à tous." --prompt "$work/voice.pt" \
  --out "$work/voice.json" >"$work/qout" 2>&1
check "qwen3-tts --prompt FILE.pt exits 0" [ $? -eq 0 ]
"$refenc" encode "$fixtures/fr-f-44k.wav" "${qwen[@]}" --x-vector-only --prompt "$work/xvec.pt" >/dev/null 2>&1
read_back=$(/usr/bin/python3 - "$work/voice.pt" "$work/voice.json" "$work/xvec.pt" <<'PY'
import json, sys
import torch
def items(path):  # as Qwen3-TTS's demo loads a saved voice-clone prompt
    payload = torch.load(path, map_location="cpu", weights_only=True)
    assert isinstance(payload, dict) and isinstance(payload["items"], list)
    return payload["items"]
[it] = items(sys.argv[1])
ours = json.load(open(sys.argv[2]))["tensors"]
code, emb = it["ref_code"], it["ref_spk_embedding"]
ok = list(it) == ["ref_code", "ref_spk_embedding", "x_vector_only_mode", "icl_mode", "ref_text"] \
    and code.dtype == torch.int64 and list(code.shape) == ours["ref_code"]["shape"] and code.shape[1] == 16 \
    and code.flatten().tolist() == ours["ref_code"]["values"] \
    and emb.dtype == torch.float32 and emb.flatten().tolist() == ours["ref_spk_embedding"]["values"] \
    and it["x_vector_only_mode"] is False and it["icl_mode"] is True and it["ref_text"] == "Bonjour à tous."
[x] = items(sys.argv[3])
ok = ok and x["ref_code"] is None and x["x_vector_only_mode"] is True and x["icl_mode"] is False \
    and x["ref_text"] is None and torch.equal(x["ref_spk_embedding"], emb)
print("ok" if ok else f"mismatch {it} {x}")
PY
)
check "qwen3-tts's voice-clone prompt opens with torch.load(weights_only=True) as upstream's demo reads it" [ "$read_back" = ok ]
"$refenc" encode "$fixtures/fr-f-44k.wav" "${qwen[@]}" --prompt "$work/icl.pt" >/dev/null 2>"$work/icl.err"
check "an ICL prompt without --text exits 2" [ $? -eq 2 ]
check "  saying why" grep -q "needs the reference text" "$work/icl.err"
"$refenc" encode "$fixtures/fr-f-44k.wav" "${qwen[@]}" --text hi --prompt "$work/voice.npy" >/dev/null 2>"$work/ext.err"
check "a prompt file of the wrong kind exits 2" [ $? -eq 2 ]
check "  naming the form" grep -q "voice.npy: qwen3-tts's prompt form is a .pt file" "$work/ext.err"
"$refenc" encode "$fixtures/fr-f-44k.wav" --model moss-tts-local --prompt "$work/ref.jsonl" --out "$work/moss.json" \
  >/dev/null 2>&1
read_back=$(/usr/bin/python3 - "$work/ref.jsonl" "$work/moss.json" <<'PY'
import json, sys
import torch
[line] = open(sys.argv[1], encoding="utf-8").read().splitlines()
record = json.loads(line)
codes = torch.as_tensor(record["ref_audio_codes"], dtype=torch.long)   # as MOSS-TTS's finetuning dataset reads it
ours = json.load(open(sys.argv[2]))["tensors"]["codes"]
ok = codes.dim() == 2 and codes.shape[1] == 32 and list(codes.shape) == ours["shape"] \
    and codes.flatten().tolist() == ours["values"]
print("ok" if ok else f"mismatch {codes.shape}")
PY
)
check "moss-tts-local's ref_audio_codes record reads back as MOSS-TTS's dataset reads it" [ "$read_back" = ok ]

head -c 100000 "$fixtures/codec.pth" >"$work/cut.pth"
"$refenc" encode "$fixtures/fr-f-44k.wav" --model fish-s2-pro --checkpoint "$work/cut.pth" --scale tiny \
  >"$work/o2" 2>"$work/cut.err"
check "a truncated checkpoint exits 2" [ $? -eq 2 ]
check "  with one line naming it" [ "$(wc -l <"$work/cut.err")" -eq 1 ]
check "  refenc: error: <file>: ..." grep -q "^refenc: error: $work/cut.pth: " "$work/cut.err"
"$refenc" encode "$fixtures/fr-f-44k.wav" --model fish-s2-pro --checkpoint "$fixtures/codec.pth" >/dev/null 2>"$work/scale.err"
check "a tiny checkpoint at the default scale (full) exits 2" [ $? -eq 2 ]
check "  naming a tensor and both shapes" grep -q "encoder.block.0.conv.bias. has shape \[4\], expected \[64\]" "$work/scale.err"
"$refenc" encode "$fixtures/fr-f-44k.wav" --model fish-s2-pro --checkpoint "$work/none.pth" >/dev/null 2>"$work/none.err"
check "a missing checkpoint exits 2" [ $? -eq 2 ]
"$refenc" encode "$fixtures/fr-f-44k.wav" --model fish-s2-pro --checkpoint a.pth --module b.pt >/dev/null 2>&1
check "--checkpoint with --module is refused" [ $? -ne 0 ]
finish
