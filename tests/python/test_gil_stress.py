"""Many Python threads through one service: hits, same-key merges, failures, follower timeouts and
uncacheable inputs at once, with and without batching. No thread may hang (every join has a
timeout) and the stats must add up with what the callers saw."""

from __future__ import annotations

import concurrent.futures
import threading
from collections import Counter
from typing import Any

import pytest
import torch

import refenc

THREADS = 32
ROUNDS = 200


class _Hook(refenc.TensorReferenceEncodeHook[str]):
    model_id = "stress"
    model_revision = "1"
    encoder_id = "enc"
    encoder_config_hash = "cfg"
    artifact_kind = "codes"

    def __init__(self) -> None:
        self.service: refenc.ReferenceEncodeService[Any, Any, Any] | None = None
        self.slow_entered = threading.Event()
        self.slow_release = threading.Event()
        self.lock = threading.Lock()
        self.encodes: Counter[str] = Counter()
        self.batch = False

    def input_key(self, item: str) -> str | None:
        return None if item.startswith("uncacheable") else item

    def can_encode_batch(self) -> bool:
        return self.batch

    def encode_one(self, item: str) -> torch.Tensor:
        with self.lock:
            self.encodes[item] += 1
        if self.service is not None:  # calls back into the service from the hook, GIL held
            self.service.stats()
            len(self.service._inflight)
        if item == "slow":
            self.slow_entered.set()
            assert self.slow_release.wait(timeout=60)
        if item.startswith("fail"):
            raise KeyError(item)
        return torch.tensor([len(item), sum(map(ord, item))], dtype=torch.long)

    def encode_batch(self, items: list[str]) -> list[torch.Tensor]:
        if "slow" in items:  # a failed batch is retried per item, each on its leader's thread:
            raise RuntimeError("slow item")  # the slow encode does not hold the batch worker
        return [self.encode_one(item) for item in items]


def _expected(item: str) -> list[int]:
    return [len(item), sum(map(ord, item))]


@pytest.mark.parametrize("batching", [False, True])
def test_many_threads_stats_add_up_and_nothing_hangs(batching: bool) -> None:
    hook = _Hook()
    hook.batch = batching
    service = refenc.ReferenceEncodeService(
        hook, max_items=24, max_bytes=1 << 20, timeout_s=0.05, max_batch_size=4 if batching else 1, max_batch_wait_ms=1
    )
    hook.service = service
    assert service.batching_enabled is batching

    # A leader that stays in its encode for the whole run: every other "slow" call is a follower that
    # times out.
    slow_result: list[Any] = []
    slow_leader = threading.Thread(target=lambda: slow_result.append(service.get_or_encode("slow")))
    slow_leader.start()
    assert hook.slow_entered.wait(timeout=30)

    start = threading.Barrier(THREADS)
    lock = threading.Lock()
    seen: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    wrong: list[str] = []

    def worker(index: int) -> None:
        start.wait(timeout=30)
        for r in range(ROUNDS):
            n = (index * 7 + r) % 40
            if n < 30:
                item = f"ok-{n}"  # 30 keys, 24 slots: hits, merges and evictions
            elif n < 34:
                item = f"fail-{n % 2}"
            elif n < 37:
                item = f"uncacheable-{n}"
            else:
                item = "slow"
            kind = "uncacheable" if item.startswith("uncacheable") else "cacheable"
            try:
                out = service.get_or_encode(item, desc=f"t{index}")
                outcome = "ok"
                if out.tolist() != _expected(item):
                    with lock:
                        wrong.append(item)
            except concurrent.futures.TimeoutError as exc:
                outcome = "timeout"
                assert f"Reference encode context: t{index}" in exc.__notes__
            except KeyError as exc:
                outcome = "hook_error"
                assert exc.args == (item,)
                assert f"Reference encode context: t{index}" in exc.__notes__
            with lock:
                seen[outcome] += 1
                calls[kind] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a caller hung"
    hook.slow_release.set()
    slow_leader.join(timeout=60)
    assert not slow_leader.is_alive(), "the slow leader hung"
    assert slow_result and slow_result[0].tolist() == _expected("slow")

    assert not wrong
    stats = service.stats()
    total = THREADS * ROUNDS
    assert sum(seen.values()) == total
    assert calls["cacheable"] + calls["uncacheable"] == total
    # Every cacheable call is exactly one of hit, leader (miss) or follower (merged); +1: the slow leader.
    assert stats["hits"] + stats["misses"] + stats["merged"] == calls["cacheable"] + 1
    assert stats["uncacheable"] == calls["uncacheable"]
    assert stats["timeouts"] == seen["timeout"]
    assert seen["timeout"] >= 1  # the followers of "slow" at least
    assert 1 <= stats["failed"] <= seen["hook_error"]
    # A failure is never cached: every failing call led or followed a failing encode.
    if not batching:  # (a batch that fails is retried per item: more encodes than failures)
        assert hook.encodes["fail-0"] + hook.encodes["fail-1"] == stats["failed"]
    assert stats["entries"] <= 24
    assert stats["evictions"] >= 1
    assert len(service._inflight) == 0
    service.close()
    assert not service.batching_enabled or not service._batch_thread.is_alive()


def test_service_dropped_with_cached_python_objects_releases_them() -> None:
    import gc
    import weakref

    class Box:
        pass

    class _BoxHook(refenc.ReferenceEncodeHook[str, Any, Any]):
        def normalize_input(self, raw: Any) -> str:
            return str(raw)

        def cache_key(self, item: str) -> refenc.ReferenceEncodeKey:
            return refenc.ReferenceEncodeKey("m", "r", "e", "c", "k", item)

        def encode_one(self, item: str) -> Any:
            return Box()

        def store_artifact(self, artifact: Any) -> Any:
            return artifact

        def load_artifact(self, stored: Any) -> Any:
            return stored

        def stored_bytes(self, stored: Any) -> int:
            return 1

    service = refenc.ReferenceEncodeService(_BoxHook(), max_items=2)
    refs = [weakref.ref(service.get_or_encode(f"k{i}")) for i in range(4)]  # two evicted
    del service
    gc.collect()
    # Evictions, and the service's end, released every reference it held.
    assert all(r() is None for r in refs)
