"""refenc.Encoder: refenc's own encoders from Python, the seeded proxies and published checkpoints.

The Fish and MOSS fixtures (tests/encoders/fixtures/, made by upstream's code on random weights) give the
codes upstream's own encode gave; through refenc.Encoder and the service they must come out the same."""

import json
import pathlib
import struct
import threading

import pytest
import torch

import refenc

ROOT = pathlib.Path(__file__).resolve().parents[2]
FISH = ROOT / "tests" / "encoders" / "fixtures" / "fish-s2-pro"
MOSS = ROOT / "tests" / "encoders" / "fixtures" / "moss-tts-local"
CLIPS = ROOT / "workloads" / "clips"


def read_safetensors(path):
    data = path.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        begin, end = spec["data_offsets"]
        dtype = {"F32": torch.float32, "I64": torch.int64}[spec["dtype"]]
        out[name] = torch.frombuffer(bytearray(data[8 + n + begin:8 + n + end]), dtype=dtype).reshape(spec["shape"])
    return out


def test_fish_checkpoint_gives_upstreams_codes_through_the_service():
    enc = refenc.Encoder("fish-s2-pro", checkpoint=FISH / "codec.pth", scale="tiny", threads=1)
    assert enc.config["model_revision"].startswith("checkpoint:")
    assert enc.config["checkpoint"].endswith("codec.pth")
    expected = read_safetensors(FISH / "expected.safetensors")
    service = refenc.ReferenceEncodeService(enc, max_bytes=16 << 20)
    try:
        for clip in ("en-m-44k", "fr-f-44k"):
            art = service.get_or_encode(str(FISH / f"{clip}.wav"))
            assert art["codes"].dtype == torch.int64
            assert torch.equal(art["codes"], expected[f"{clip}.codes"])
            assert art["model_revision"] == enc.config["model_revision"]
            again = service.get_or_encode((FISH / f"{clip}.wav").read_bytes())  # the same content: a hit
            assert torch.equal(again["codes"], art["codes"]) and again["codes"] is not art["codes"]
        assert service.stats()["hits"] == 2 and service.stats()["misses"] == 2
    finally:
        service.close()


def test_moss_checkpoint_from_a_model_folder_and_concurrent_callers():
    enc = refenc.Encoder("moss-tts-local", checkpoint=MOSS, scale="tiny", threads=1)
    proxy = refenc.Encoder("moss-tts-local", scale="tiny", threads=1)
    assert enc.config["encoder_config_hash"] != proxy.config["encoder_config_hash"]
    item = enc.normalize_input({"audio": str(CLIPS / "de-m-24k.flac")})
    key = enc.cache_key(item)
    assert key.model_id == "moss-tts-local" and key.encoder_config_hash == enc.config["encoder_config_hash"]
    assert key.input_key == item.content_key
    single = enc.encode_one(item)["codes"]
    assert single.shape == (item.samples // 1920, 32)
    service = refenc.ReferenceEncodeService(enc, max_bytes=16 << 20)
    results, errors = [], []

    def call():
        try:
            results.append(service.get_or_encode(CLIPS / "de-m-24k.flac")["codes"])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    service.close()
    assert not errors
    assert all(torch.equal(r, single) for r in results)
    stats = service.stats()
    assert stats["misses"] == 1 and stats["hits"] + stats["merged"] == 5


def test_the_default_is_the_seeded_proxy_and_batches_are_the_single_encodes():
    enc = refenc.Encoder("fish-s2-pro", threads=1)
    assert enc.config["model_revision"] == "proxy-v1"
    assert enc.can_encode_batch()
    items = [enc.normalize_input(CLIPS / name) for name in ("de-m-24k.flac", "en-m-16k.flac")]
    batched = enc.encode_batch(items)
    for item, art in zip(items, batched):
        assert torch.equal(art["codes"], enc.encode_one(item)["codes"])


def test_qwen_reads_the_text_and_x_vector_only():
    enc = refenc.Encoder("qwen3-tts", threads=1)
    a = enc.normalize_input({"audio": CLIPS / "de-m-24k.flac", "text": "hallo"})
    b = enc.normalize_input({"audio": CLIPS / "de-m-24k.flac", "text": "welt"})
    assert enc.cache_key(a).options_key != enc.cache_key(b).options_key
    x = enc.encode_one(enc.normalize_input({"audio": CLIPS / "de-m-24k.flac", "x_vector_only": True}))
    assert "ref_code" not in x and x["ref_spk_embedding"].dtype == torch.float32


def test_bad_checkpoints_options_and_inputs_are_one_line_errors(tmp_path):
    bad = tmp_path / "cut.safetensors"
    bad.write_bytes((MOSS / "model.safetensors").read_bytes()[:100000])
    with pytest.raises(ValueError, match="cut.safetensors.*truncated") as e:
        refenc.Encoder("moss-tts-local", checkpoint=bad, scale="tiny")
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="no such checkpoint file or folder"):
        refenc.Encoder("fish-s2-pro", checkpoint=tmp_path / "nowhere.pth")
    with pytest.raises(ValueError, match="has shape"):
        refenc.Encoder("moss-tts-local", checkpoint=MOSS, scale="small")
    with pytest.raises(ValueError, match="model"):
        refenc.Encoder("no-such-model")
    with pytest.raises(ValueError, match="exclusive"):
        refenc.Encoder("fish-s2-pro", checkpoint="a.pth", module="m.pt")
    enc = refenc.Encoder("moss-tts-local", checkpoint=MOSS, scale="tiny", threads=1)
    with pytest.raises(ValueError, match="missing.wav"):
        enc.normalize_input(str(tmp_path / "missing.wav"))
    with pytest.raises(TypeError):
        enc.normalize_input(42)
