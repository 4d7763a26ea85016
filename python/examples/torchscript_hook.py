"""An example refenc hook: a TorchScript module, loaded with torch.jit.load, behind sglang-omni's hook
API. For the same module file and clip it gives the keys and artifacts of refenc's C++ path
(``refenc encode --model M --module FILE``, or a manifest encoder's ``"module"``): same decode
(``refenc.load_reference``), same encoder config hash, same tensors and metadata. The test
tests/cli/python_backend_test.cpp checks it.

    hook = make_hook(module="fish.pt", model="fish-s2-pro")
    service = refenc.ReferenceEncodeService(hook, max_bytes=256 << 20)
    codes = service.get_or_encode({"path": "clip.flac", "text": ""})["codes"]   # int64 [10, T]

In a profile manifest (refenc runs it in an embedded interpreter, docs/python.md):

    "encoder": {"python": "torchscript_hook:make_hook", "python_path": ["../python/examples"],
                "python_args": {"module": "fish.pt", "model": "fish-s2-pro"}}

The module's calling convention is refenc's (docs/encoders.md): forward(wave) with wave float32 of
shape [1, 1, N], mono at the family's rate; it returns a tensor or a tuple of tensors in the family's
artifact order, with an optional leading batch dimension of size 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any

import torch

import refenc


@dataclass(frozen=True)
class Family:
    """What refenc's encoder registry says of a family (lib/encoders/encoder_registry.cpp)."""

    encoder_id: str
    artifact_kind: str
    sample_rate: int
    samples_per_frame: int
    outputs: tuple[str, ...]
    loudness_dbfs: float | None
    batches: bool  # refenc's hook for the family opts into the generic batch surface


FAMILIES = {
    "fish-s2-pro": Family("modded-dac-rvq", "codes", 44100, 2048, ("codes",), None, True),
    "moss-tts-local": Family("moss-audio-tokenizer-v1", "codes", 24000, 1920, ("codes",), -20.0, False),
}


def _file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


class TorchScriptHook(refenc.KeyedReferenceEncodeHook[refenc.LoadedReference, dict, dict]):
    """Raw input: a dict with ``path`` (a file or data URI) or ``audio`` (the file's bytes), and
    ``text`` (not read by these families). The artifact: {output name: tensor, "model": ...,
    "model_revision": ..., "scale": "module"}, integer tensors int64 and floating ones float32."""

    def __init__(self, module: str, model: str = "fish-s2-pro", threads: int = 0) -> None:
        if model not in FAMILIES:
            raise ValueError(f"model {model!r}: this example knows {', '.join(sorted(FAMILIES))}")
        if not os.path.isfile(module):
            raise ValueError(f"module {module!r}: no such file")
        self.family = FAMILIES[model]
        self.sample_rate = self.family.sample_rate  # read by refenc's profiler for its report
        self.frame_rate = self.family.sample_rate / self.family.samples_per_frame
        digest = _file_sha256(module)
        config = {
            "family": model,
            "revision": "module:" + digest,
            "module_sha256": digest,
            "dtype": "float32",
            "device_type": "cpu",
            "calling_convention": "forward(wave[1,1,N]) -> tensor or tuple",
            "outputs": list(self.family.outputs),
        }
        self.model_id = model
        self.model_revision = "module:" + digest
        self.encoder_id = self.family.encoder_id
        self.encoder_config_hash = hashlib.sha256(
            json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()
        self.artifact_kind = self.family.artifact_kind
        if threads > 0:
            torch.set_num_threads(threads)
        self._module = torch.jit.load(module, map_location="cpu").eval()
        self._lock = threading.Lock()  # refenc's C++ path serialises calls into one module too

    def normalize_input(self, raw_input: Any) -> refenc.LoadedReference:
        if not isinstance(raw_input, dict):
            raise TypeError(f"expected a dict with 'path' or 'audio', got {type(raw_input).__name__}")
        source = raw_input.get("audio") or raw_input.get("path")
        if not source:
            raise ValueError("the request has neither 'audio' nor 'path'")
        ref = refenc.load_reference(source, sample_rate=self.family.sample_rate, loudness_dbfs=self.family.loudness_dbfs)
        if ref.samples.numel() == 0:
            raise ValueError(f"{ref.description}: no audio samples")
        return ref

    def input_key(self, item: refenc.LoadedReference) -> str | None:
        return item.content_key or None

    def encode_one(self, item: refenc.LoadedReference) -> dict:
        wave = item.samples.reshape(1, 1, -1)
        with torch.inference_mode(), self._lock:
            result = self._module(wave)
        tensors = list(result) if isinstance(result, tuple) else [result]
        if len(tensors) != len(self.family.outputs):
            raise RuntimeError(f"module returned {len(tensors)} tensors, expected {len(self.family.outputs)}")
        out: dict[str, Any] = {}
        for name, t in zip(self.family.outputs, tensors):
            if t.dim() == 3 and t.shape[0] == 1:
                t = t.squeeze(0)
            t = t.to(torch.int64) if not t.is_floating_point() else t.to(torch.float32)
            out[name] = t.detach().cpu().contiguous()
        out.update(model=self.model_id, model_revision=self.model_revision, scale="module")
        return out

    def batch_length(self, item: refenc.LoadedReference) -> int:
        return item.samples.numel()  # what a batch pads to its longest item

    def can_encode_batch(self) -> bool:
        return self.family.batches

    def encode_batch(self, items: list[refenc.LoadedReference]) -> list[dict]:
        return [self.encode_one(item) for item in items]  # what the C++ path does with a module

    def store_artifact(self, artifact: dict) -> dict:
        return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in artifact.items()}

    def load_artifact(self, stored: dict) -> dict:
        return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in stored.items()}


def make_hook(module: str, model: str = "fish-s2-pro", threads: int = 0) -> TorchScriptHook:
    """The factory a manifest names: ``{"python": "torchscript_hook:make_hook", ...}``."""
    return TorchScriptHook(module, model, threads)
