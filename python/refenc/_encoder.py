"""refenc's own encoders as a Python hook: ``Encoder``.

The C++ encoders of the ``refenc`` CLI (Fish S2-Pro, Qwen3-TTS, MOSS-TTS Local) behind the
ReferenceEncodeHook surface, so a Python serving stack gets refenc's decode, key and network, the seeded
proxies or a published checkpoint, inside refenc's ReferenceEncodeService. Decoding and encoding run in
C++ with the GIL released.

    enc = refenc.Encoder("moss-tts-local", checkpoint="/models/MOSS-Audio-Tokenizer", scale="full")
    service = refenc.ReferenceEncodeService(enc, max_bytes=256 << 20)
    art = service.get_or_encode("clip.wav")          # {"codes": int64 [T, 32], "model_revision": ...}
    service.get_or_encode({"audio": wav_bytes, "text": "the words spoken"})   # Qwen3-TTS reads the text
    enc.config["encoder_config_hash"]                # the checkpoint's digest is part of it
"""

from __future__ import annotations

import os
from typing import Any

import torch

from . import ReferenceEncodeHook, ReferenceEncodeKey, _core

_TORCH_DTYPES = {"uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
                 "float32": torch.float32}

Artifact = dict[str, Any]  # tensor name -> torch.Tensor, metadata key -> str


def _artifact(raw: dict[str, Any]) -> Artifact:
    out: Artifact = {}
    for name, value in raw.items():
        if isinstance(value, tuple):
            dtype, shape, data = value
            t = torch.frombuffer(bytearray(data), dtype=_TORCH_DTYPES[dtype]) if data else torch.empty(0, dtype=_TORCH_DTYPES[dtype])
            out[name] = t.reshape(shape)
        else:
            out[name] = value
    return out


class Encoder(ReferenceEncodeHook[Any, Artifact, Artifact]):
    """One of refenc's encoders. ``model``: "fish-s2-pro", "qwen3-tts" or "moss-tts-local".

    ``checkpoint``: the published checkpoint (a file or a downloaded model folder, docs/encoders.md) at
    ``scale`` "full"; ``module``: a TorchScript module instead of the network; neither: the seeded proxy
    at ``scale`` ("tiny", "small" or "full"). ``threads`` > 0 sets LibTorch's and OpenBLAS's threads.
    ValueError (one line naming the file or option and the reason) for a bad model, option or
    checkpoint.

    ``normalize_input`` takes a path or data URI (str or os.PathLike), the file's bytes, or a dict
    ``{"audio": <path or bytes>, "text": str, "x_vector_only": bool}``; the artifact is a dict of CPU
    tensors (and metadata strings), a fresh copy for every caller."""

    def __init__(self, model: str, *, checkpoint: str | os.PathLike[str] | None = None,
                 module: str | os.PathLike[str] | None = None, scale: str | None = None,
                 dtype: str = "float32", device: str = "cpu", threads: int = 0) -> None:
        if scale is None:
            scale = "full" if checkpoint is not None or module is not None else "tiny"
        if checkpoint is not None and module is not None:
            raise ValueError("checkpoint and module are exclusive: a module replaces the network a checkpoint loads")
        if isinstance(threads, bool) or not isinstance(threads, int):
            raise TypeError(f"threads must be an int, got {type(threads).__name__}")
        self._core = _core.Encoder(model, scale, dtype, device, os.fspath(checkpoint) if checkpoint is not None else "",
                                   os.fspath(module) if module is not None else "", threads)
        self.config: dict[str, Any] = dict(self._core.config)
        self.model_id = self.config["model_id"]

    def normalize_input(self, raw_input: Any) -> Any:
        text, x_vector_only, audio = "", False, raw_input
        if isinstance(raw_input, dict):
            if "audio" not in raw_input:
                raise ValueError("a reference dict needs 'audio' (a path, a data URI or bytes)")
            audio = raw_input["audio"]
            text = raw_input.get("text") or ""
            x_vector_only = bool(raw_input.get("x_vector_only", False))
            if not isinstance(text, str):
                raise TypeError(f"'text' must be a str, got {type(text).__name__}")
        if isinstance(audio, (bytes, bytearray, memoryview)):
            return self._core.normalize(bytes(audio), True, text, x_vector_only)
        if isinstance(audio, (str, os.PathLike)):
            return self._core.normalize(os.fspath(audio), False, text, x_vector_only)
        raise TypeError(f"a reference is a path, a data URI, bytes or a dict with 'audio', got {type(audio).__name__}")

    def cache_key(self, item: Any) -> ReferenceEncodeKey | None:
        fields = self._core.cache_key(item)
        return None if fields is None else ReferenceEncodeKey(**fields)

    def encode_one(self, item: Any) -> Artifact:
        return _artifact(self._core.encode(item))

    def can_encode_batch(self) -> bool:
        return bool(self._core.can_encode_batch)

    def encode_batch(self, items: list[Any]) -> list[Artifact]:
        return [_artifact(a) for a in self._core.encode_batch(list(items))]

    def store_artifact(self, artifact: Artifact) -> Artifact:
        return {k: (v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else v) for k, v in artifact.items()}

    def load_artifact(self, stored: Artifact) -> Artifact:
        return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in stored.items()}
