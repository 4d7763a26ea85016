"""The disk tier, the registered voices and the Prometheus text, from Python."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import torch

import refenc


class _Hook(refenc.KeyedReferenceEncodeHook[str, Any, Any]):
    model_id = "tiers"
    model_revision = "1"
    encoder_id = "enc"
    encoder_config_hash = "cfg"
    artifact_kind = "codes"

    def __init__(self, form: str = "tensor") -> None:
        self.form = form
        self.encodes = 0
        self.lock = threading.Lock()

    def input_key(self, item: str) -> str | None:
        return item

    def encode_one(self, item: str) -> Any:
        with self.lock:
            self.encodes += 1
        codes = torch.arange(len(item) * 3, dtype=torch.long).reshape(len(item), 3)
        if self.form == "tensor":
            return codes
        if self.form == "dict":
            return {"codes": codes, "embedding": torch.full((4,), 0.5), "ref_text": item.upper()}
        return [codes]  # no entry form

    def store_artifact(self, artifact: Any) -> Any:
        if isinstance(artifact, torch.Tensor):
            return artifact.clone()
        if isinstance(artifact, dict):
            return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in artifact.items()}
        return list(artifact)

    def load_artifact(self, stored: Any) -> Any:
        return self.store_artifact(stored)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("form", ["tensor", "dict"])
def test_disk_tier_answers_a_fresh_service(tmp_path: Path, form: str) -> None:
    first_hook = _Hook(form)
    first = refenc.ReferenceEncodeService(first_hook, cache_dir=str(tmp_path))
    made = first.get_or_encode("hello")
    assert first.stats()["disk_writes"] == 1
    first.close()

    second_hook = _Hook(form)
    second = refenc.ReferenceEncodeService(second_hook, cache_dir=str(tmp_path))
    again = second.get_or_encode("hello")
    assert second_hook.encodes == 0
    assert _same(made, again)
    stats = second.stats()
    assert stats["disk_hits"] == 1
    assert stats["misses"] == 1  # a memory miss, answered by the disk
    assert second.get_or_encode("hello") is not again  # then a memory hit, caller-owned
    assert second.stats()["hits"] == 1


def test_artifact_without_entry_form_is_served_not_written(tmp_path: Path) -> None:
    hook = _Hook("list")
    service = refenc.ReferenceEncodeService(hook, cache_dir=str(tmp_path))
    out = service.get_or_encode("abc")
    assert isinstance(out, list)
    stats = service.stats()
    assert stats["disk_writes"] == 0
    assert stats["unconvertible"] == 1
    assert service.get_or_encode("abc") == out  # from memory


def test_unsupported_dtype_is_not_written(tmp_path: Path) -> None:
    class _Half(_Hook):
        def encode_one(self, item: str) -> Any:
            return torch.ones(2, dtype=torch.float16)

    service = refenc.ReferenceEncodeService(_Half(), cache_dir=str(tmp_path))
    assert service.get_or_encode("x").dtype == torch.float16
    assert service.stats()["disk_writes"] == 0
    assert service.stats()["unconvertible"] == 1


def test_prometheus_text_has_the_counters_and_labels() -> None:
    service = refenc.ReferenceEncodeService(_Hook())
    service.get_or_encode("a")
    service.get_or_encode("a")
    text = service.prometheus_text({"model": "fish-s2-pro"})
    assert "# TYPE refenc_hits_total counter" in text
    assert 'refenc_hits_total{model="fish-s2-pro"} 1' in text
    assert 'refenc_misses_total{model="fish-s2-pro"} 1' in text
    assert "myapp_hits_total" in service.prometheus_text(prefix="myapp_")


def test_voices_round_trip_and_clear(tmp_path: Path) -> None:
    voices = refenc.VoiceCache(str(tmp_path), max_voices=2)
    codes = torch.tensor([[1, 2, 3]], dtype=torch.long)
    assert voices.put("fish-s2-pro", "Alice", codes) is True
    got = voices.get("fish-s2-pro", "ALICE")
    assert torch.equal(got, codes) and got.dtype == torch.long
    got.fill_(0)
    assert torch.equal(voices.get("fish-s2-pro", "alice"), codes)  # each get is a new object
    assert voices.get("fish-s2-pro", "alice", version="2") is None

    # Another cache on the same folder (another process, in real use) sees the voice.
    other = refenc.VoiceCache(str(tmp_path), max_voices=2)
    assert torch.equal(other.get("fish-s2-pro", "alice"), codes)
    assert [e["voice"] for e in other.list()] == ["alice"]

    voices.put("fish-s2-pro", "bob", {"codes": codes, "ref_text": "hi"})
    with pytest.raises(ValueError, match="voice cap reached"):
        voices.put("fish-s2-pro", "carol", codes)
    assert voices.voice_count() == 2
    assert voices.clear_voice("alice") is True
    assert voices.get("fish-s2-pro", "alice") is None
    assert voices.stats()["delete_invalidation_counter"] == 1
    bob = voices.get("fish-s2-pro", "bob")
    assert bob["ref_text"] == "hi" and torch.equal(bob["codes"], codes)


def test_voices_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_voices"):
        refenc.VoiceCache(str(tmp_path), max_voices=0)
    voices = refenc.VoiceCache(str(tmp_path))
    with pytest.raises(ValueError, match="voice"):
        voices.put("fish-s2-pro", "../etc", torch.zeros(1))
    with pytest.raises(TypeError, match="tensor or a dict"):
        voices.put("fish-s2-pro", "dave", [1, 2])
    assert voices.voice_count() == 0


def test_disk_cache_maintenance(tmp_path: Path) -> None:
    service = refenc.ReferenceEncodeService(_Hook(), cache_dir=str(tmp_path))
    for item in ("a", "bb", "ccc"):
        service.get_or_encode(item)
    disk = refenc.DiskCache(str(tmp_path))
    assert disk.enabled
    stats = disk.stats()
    assert stats["entries"] == 3 and stats["models"]["tiers"]["entries"] == 3

    entry = next(p for p in Path(disk.root).rglob("*.pt"))
    entry.write_bytes(b"not an entry")
    report = disk.verify()
    assert report["checked"] == 3 and report["ok"] == 2 and len(report["corrupt"]) == 1
    assert disk.verify(delete=True)["removed"] == 1

    assert disk.gc(max_bytes=0)["evicted"] == 2
    assert disk.stats()["entries"] == 0
    service.get_or_encode("dddd")  # encoded, written through
    service.clear()  # memory only
    hits = service.stats()["disk_hits"]
    service.get_or_encode("dddd")
    assert service.stats()["disk_hits"] == hits + 1
    assert disk.clear(model="tiers") == 1
    with pytest.raises(ValueError, match="max_bytes"):
        disk.gc(max_bytes=-1)
