"""Bad settings and bad hook answers raise a clear TypeError or ValueError naming the argument, and
leave the service as it was."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import refenc


class _Hook(refenc.TensorReferenceEncodeHook[str]):
    model_id = "m"
    model_revision = "r"
    encoder_id = "e"
    encoder_config_hash = "c"
    artifact_kind = "codes"

    def __init__(self) -> None:
        self.bad_key: Any = None

    def input_key(self, item: str) -> str | None:
        return item

    def cache_key(self, item: str) -> Any:
        if self.bad_key is not None:
            return self.bad_key
        return super().cache_key(item)

    def encode_one(self, item: str) -> torch.Tensor:
        if item == "raise-normalize":
            raise AssertionError("unreachable")
        return torch.tensor([len(item)])

    def normalize_input(self, raw_input: Any) -> str:
        if not isinstance(raw_input, str):
            raise TypeError(f"reference must be a str, got {type(raw_input).__name__}")
        return raw_input


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"max_items": "3"}, TypeError, "max_items"),
        ({"max_items": 1.5}, TypeError, "max_items"),
        ({"max_bytes": True}, TypeError, "max_bytes"),
        ({"max_bytes": -5}, ValueError, "max_bytes"),
        ({"timeout_s": 0}, ValueError, "timeout_s"),
        ({"timeout_s": -1.0}, ValueError, "timeout_s"),
        ({"timeout_s": "1"}, TypeError, "timeout_s"),
        ({"timeout_s": float("nan")}, ValueError, "timeout_s"),
        ({"max_batch_size": 2.0}, TypeError, "max_batch_size"),
        ({"max_batch_wait_ms": float("inf")}, ValueError, "max_batch_wait_ms"),
        ({"log_prefix": 3}, TypeError, "log_prefix"),
        ({"cache_dir": 3}, TypeError, "cache_dir"),
        ({"cache_dir": "/tmp/x", "max_disk_bytes": 0}, ValueError, "max_disk_bytes"),
        ({"shared_cache": "http://127.0.0.1:1"}, ValueError, "redis"),
        ({"shared_cache": "redis://127.0.0.1:1", "shared_cache_timeout": 0}, ValueError, "shared_cache_timeout"),
        ({"shared_cache": "redis://127.0.0.1:1", "shared_cache_ttl": -1}, ValueError, "shared_cache_ttl"),
        ({"shared_cache": "redis://127.0.0.1:1", "shared_cache_prefix": "no spaces"}, ValueError, "prefix"),
    ],
)
def test_bad_settings_name_the_setting(kwargs: dict[str, Any], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        refenc.ReferenceEncodeService(_Hook(), **kwargs)


def test_remote_shared_cache_without_password_is_refused_before_connecting() -> None:
    with pytest.raises(ValueError, match="password"):
        refenc.ReferenceEncodeService(_Hook(), shared_cache="redis://192.0.2.1:6379")


def test_hook_missing_a_method_is_named() -> None:
    class Half:
        def normalize_input(self, raw: Any) -> Any:
            return raw

    with pytest.raises(TypeError, match="cache_key"):
        refenc.ReferenceEncodeService(Half())


def test_bad_calls_raise_and_lose_nothing() -> None:
    hook = _Hook()
    service = refenc.ReferenceEncodeService(hook, max_items=4, max_bytes=1024)
    assert service.get_or_encode("a").tolist() == [1]
    before = service.stats()

    with pytest.raises(TypeError, match="desc"):
        service.get_or_encode("a", desc=5)
    with pytest.raises(TypeError, match="reference must be a str"):
        service.get_or_encode(42)
    hook.bad_key = "not a key"
    with pytest.raises(TypeError, match="cache_key must return a ReferenceEncodeKey or None, got str"):
        service.get_or_encode("b")
    hook.bad_key = refenc.ReferenceEncodeKey("m", "r", "e", "c", "codes", 7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="input_key must be a str, got int"):
        service.get_or_encode("b")
    hook.bad_key = None

    assert service.stats() == before
    assert len(service._inflight) == 0
    assert service.get_or_encode("a").tolist() == [1]
    assert service.stats()["hits"] == before["hits"] + 1


def test_bad_stored_bytes_is_an_error_of_that_call_only() -> None:
    class _Sized(_Hook):
        def stored_bytes(self, stored: Any) -> int:
            return -1 if stored.tolist() == [3] else 8

    service = refenc.ReferenceEncodeService(_Sized())
    with pytest.raises(RuntimeError, match="negative size"):
        service.get_or_encode("bad")
    assert service.get_or_encode("ok").tolist() == [2]
    assert service.stats()["failed"] == 1
    assert len(service._inflight) == 0


def test_bad_prometheus_labels() -> None:
    service = refenc.ReferenceEncodeService(_Hook())
    with pytest.raises(ValueError, match="label"):
        service.prometheus_text({"bad-name": "x"})
    with pytest.raises(TypeError, match="labels"):
        service.prometheus_text({"model": 3})  # type: ignore[dict-item]
