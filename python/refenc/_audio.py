"""refenc's reference ingestion for Python hooks: ``load_reference``.

The same decode (libsndfile), downmix, resample (refenc's polyphase resampler), loudness
normalisation and content key as refenc's C++ encoders, so a Python hook that decodes with it keys
and encodes exactly what refenc's own hooks do for the same clip. The work runs without the GIL.

    ref = load_reference("clip.flac", sample_rate=44100)
    ref.samples            # torch.float32 [N], mono at 44.1 kHz
    ref.content_key        # SHA-256 hex of the file's bytes: the key's input_key
    load_reference(wav_bytes, sample_rate=24000, loudness_dbfs=-20.0)   # bytes, loudness-normalised
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from . import _core


@dataclass(frozen=True)
class LoadedReference:
    """A decoded reference: mono float32 samples at ``sample_rate`` and what refenc knows of it."""

    samples: torch.Tensor
    sample_rate: int
    content_key: str
    source_rate: int
    source_channels: int
    source_format: str
    gain_db: float
    description: str

    @property
    def seconds(self) -> float:
        return self.samples.numel() / self.sample_rate if self.sample_rate else 0.0


def load_reference(
    source: str | bytes | bytearray | os.PathLike[str],
    *,
    sample_rate: int,
    loudness_dbfs: float | None = None,
    max_gain_db: float = 3.0,
) -> LoadedReference:
    """Decodes ``source`` (a path, a ``data:`` URI, or the file's bytes) to mono at ``sample_rate``,
    loudness-normalised to ``loudness_dbfs`` (RMS, gain clamped to +-``max_gain_db``) when given.
    ValueError names the source and the reason for anything refenc refuses; URLs are not fetched."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int):
        raise TypeError(f"sample_rate must be an int, got {type(sample_rate).__name__}")
    if isinstance(source, (bytes, bytearray)):
        raw = _core.load_reference(bytes(source), True, sample_rate, loudness_dbfs, float(max_gain_db))
    elif isinstance(source, (str, os.PathLike)):
        raw = _core.load_reference(os.fspath(source), False, sample_rate, loudness_dbfs, float(max_gain_db))
    else:
        raise TypeError(f"source must be a path, a data URI or bytes, got {type(source).__name__}")
    data = raw.pop("samples")
    samples = torch.frombuffer(bytearray(data), dtype=torch.float32) if data else torch.empty(0)
    return LoadedReference(samples=samples, **raw)
