"""refenc.load_reference: refenc's decoder, resampler and content key from Python."""

import hashlib
import pathlib

import pytest
import torch

import refenc

CLIPS = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "clips"


def test_a_path_and_its_bytes_decode_alike_and_key_by_content():
    path = CLIPS / "de-m-24k.flac"
    data = path.read_bytes()
    a = refenc.load_reference(path, sample_rate=44100)
    b = refenc.load_reference(data, sample_rate=44100)
    assert a.content_key == b.content_key == hashlib.sha256(data).hexdigest()
    assert a.sample_rate == 44100 and a.source_rate == 24000 and a.source_format == "FLAC"
    assert a.samples.dtype == torch.float32 and a.samples.dim() == 1
    assert torch.equal(a.samples, b.samples)
    assert a.seconds == pytest.approx(a.samples.numel() / 44100)
    assert abs(a.samples.numel() - round(a.seconds * 44100)) <= 1


def test_loudness_normalisation_reports_its_gain():
    plain = refenc.load_reference(CLIPS / "en-m-16k.flac", sample_rate=24000)
    loud = refenc.load_reference(CLIPS / "en-m-16k.flac", sample_rate=24000, loudness_dbfs=-20.0, max_gain_db=3.0)
    assert plain.gain_db == 0
    assert -3.0 <= loud.gain_db <= 3.0
    assert loud.content_key == plain.content_key


def test_bad_input_is_one_clear_exception():
    with pytest.raises(ValueError, match="not-a-file.flac"):
        refenc.load_reference("/nonexistent/not-a-file.flac", sample_rate=24000)
    with pytest.raises(ValueError):
        refenc.load_reference(b"this is not audio", sample_rate=24000)
    with pytest.raises(ValueError, match="sample_rate"):
        refenc.load_reference(CLIPS / "en-m-16k.flac", sample_rate=0)
    with pytest.raises(TypeError, match="sample_rate"):
        refenc.load_reference(CLIPS / "en-m-16k.flac", sample_rate=24000.0)
    with pytest.raises(TypeError, match="source"):
        refenc.load_reference(42, sample_rate=24000)
