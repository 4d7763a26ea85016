"""The seed's ReferenceEncodeService in pure Python: the anchor bench_py_hit.py measures refenc against.

Written from the seed's specification (reference-encode-service.md): the upstream shape, the hook's
methods called as the upstream service calls them, on every request. A request normalizes its input
(`hook.normalize_input`) and computes its key (`hook.cache_key`, a `ReferenceEncodeKey`, or None to
bypass the cache) in the caller's thread; then, under one service-owned `threading.Lock`:

- a memory hit (a `collections.OrderedDict` keyed by the key object, moved to the end on a hit)
  returns `hook.load_artifact(stored)` outside the lock;
- a key already being encoded makes the caller a follower of the leader's `Future` (waiting at most
  `timeout_s`, then `concurrent.futures.TimeoutError`; the leader's entry stays in flight);
- otherwise the caller leads: `encode_one`, `store_artifact`, `revalidate`, then the insertion into
  the LRU (bounded by `max_items` entries and by `max_bytes` of stored representation, oldest first
  out; an artifact over `max_bytes` is served to the leader and its followers but not inserted), and
  resolves the followers. A failure reaches the leader and every follower and is never cached.

`stats()` has the seed's counters: hits, misses, merged, entries, bytes, evictions, failed,
uncacheable. It has none of refenc's extras (tiers, batching, fresh exception copies per caller).

    /usr/bin/python3 bench/python/py_service_peer.py     # its own check of the mechanics above
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any

_MISSING = object()


def _default_stored_bytes(stored: Any) -> int:
    """Bytes of a stored representation: tensor data, summed over dicts, lists and tuples."""
    numel = getattr(stored, "numel", None)
    if callable(numel) and hasattr(stored, "element_size"):
        return int(numel()) * int(stored.element_size())
    if isinstance(stored, dict):
        return sum(_default_stored_bytes(v) for v in stored.values())
    if isinstance(stored, (list, tuple)):
        return sum(_default_stored_bytes(v) for v in stored)
    if isinstance(stored, (str, bytes, bytearray)):
        return len(stored)
    return int(getattr(stored, "nbytes", 0))


class Service:
    """Single-flight, a byte- and item-bounded LRU and failure fan-out over a hook, in pure Python."""

    def __init__(
        self,
        hook: Any,
        *,
        max_items: int | None = 256,
        max_bytes: int | None = 64 << 20,
        timeout_s: float = 130.0,
    ) -> None:
        self._hook = hook
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()  # key -> (stored, bytes)
        self._bytes = 0
        self._inflight: dict[Any, Future] = {}
        self._stats = dict(hits=0, misses=0, merged=0, evictions=0, failed=0, uncacheable=0)
        sized = getattr(hook, "stored_bytes", None)
        self._stored_bytes = sized if callable(sized) else _default_stored_bytes

    def get_or_encode(self, raw_input: Any, *, desc: str | None = None) -> Any:
        """The artifact for `raw_input`, owned by the caller (`hook.load_artifact` of the stored one)."""
        hook = self._hook
        item = hook.normalize_input(raw_input)
        key = hook.cache_key(item)
        if key is None:
            with self._lock:
                self._stats["uncacheable"] += 1
            return hook.load_artifact(hook.store_artifact(hook.encode_one(item)))

        with self._lock:
            entry = self._entries.get(key, _MISSING)
            if entry is not _MISSING:
                self._entries.move_to_end(key)
                self._stats["hits"] += 1
            else:
                future = self._inflight.get(key)
                leader = future is None
                if leader:
                    future = Future()
                    self._inflight[key] = future
                    self._stats["misses"] += 1
                else:
                    self._stats["merged"] += 1
        if entry is not _MISSING:
            return hook.load_artifact(entry[0])
        if not leader:
            return hook.load_artifact(future.result(timeout=self.timeout_s))
        return hook.load_artifact(self._lead(item, key, future, desc))

    def _lead(self, item: Any, key: Any, future: Future, desc: str | None) -> Any:
        """Encode `item` once for its followers; insert the stored representation unless refused."""
        hook = self._hook
        try:
            stored = hook.store_artifact(hook.encode_one(item))
            keep = bool(hook.revalidate(item, key))
            size = int(self._stored_bytes(stored)) if keep else 0
        except BaseException as exc:
            with self._lock:
                self._inflight.pop(key, None)
                self._stats["failed"] += 1
            if desc:
                exc.add_note(f"Reference encode context: {desc}")
            future.set_exception(exc)
            raise
        with self._lock:
            if keep and (self.max_bytes is None or size <= self.max_bytes):
                old = self._entries.pop(key, None)
                if old is not None:
                    self._bytes -= old[1]
                self._entries[key] = (stored, size)
                self._bytes += size
                while (self.max_items is not None and len(self._entries) > self.max_items) or (
                    self.max_bytes is not None and self._bytes > self.max_bytes
                ):
                    _, (_, gone) = self._entries.popitem(last=False)
                    self._bytes -= gone
                    self._stats["evictions"] += 1
            self._inflight.pop(key, None)
        future.set_result(stored)
        return stored

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self._stats, entries=len(self._entries), bytes=self._bytes)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def close(self) -> None:
        close = getattr(self._hook, "close", None)
        if callable(close):
            close()


def _self_check() -> None:
    """Single-flight, LRU bounds, oversize, failure fan-out without caching, follower timeout."""
    import time
    from concurrent.futures import TimeoutError as FutureTimeout
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Key:
        input_key: str

    class Hook:
        def __init__(self) -> None:
            self.encodes = 0
            self.gate = threading.Event()

        def normalize_input(self, raw: Any) -> Any:
            return raw

        def cache_key(self, item: Any) -> Key | None:
            return None if item == "nocache" else Key(str(item))

        def encode_one(self, item: Any) -> bytes:
            self.encodes += 1
            if item in ("slow", "slow bad"):
                self.gate.wait(5)
            if item in ("bad", "slow bad"):
                raise ValueError("bad reference")
            return b"x" * (100 if item == "big" else 10)

        def store_artifact(self, artifact: bytes) -> bytes:
            return bytes(artifact)

        def load_artifact(self, stored: bytes) -> bytearray:
            return bytearray(stored)

        def revalidate(self, item: Any, key: Key) -> bool:
            return True

    hook = Hook()
    svc = Service(hook, max_items=3, max_bytes=50, timeout_s=0.2)
    for k in range(5):
        assert svc.get_or_encode(k) == bytearray(b"x" * 10)
    assert svc.get_or_encode(4) == bytearray(b"x" * 10)
    s = svc.stats()
    assert (s["misses"], s["hits"], s["entries"], s["bytes"], s["evictions"]) == (5, 1, 3, 30, 2), s
    assert svc.get_or_encode("big") == bytearray(b"x" * 100) and svc.stats()["entries"] == 3
    svc.get_or_encode("nocache")
    assert svc.stats()["uncacheable"] == 1

    # A follower that waits timeout_s raises; the leader's encode stays in flight and completes.
    leader = threading.Thread(target=svc.get_or_encode, args=("slow",))
    leader.start()
    while not svc._inflight:
        time.sleep(0.001)
    try:
        svc.get_or_encode("slow")
        raise AssertionError("follower did not time out")
    except FutureTimeout:
        assert len(svc._inflight) == 1
    hook.gate.set()
    leader.join()
    assert svc.stats()["entries"] == 3 and not svc._inflight

    # Eight callers of one key: one encode, seven followers.
    svc, hook.gate = Service(hook, timeout_s=5.0), threading.Event()
    before = hook.encodes
    out: list[Any] = []
    threads = [threading.Thread(target=lambda: out.append(svc.get_or_encode("slow"))) for _ in range(8)]
    for t in threads:
        t.start()
    while svc.stats()["merged"] < 7:
        time.sleep(0.001)
    hook.gate.set()
    for t in threads:
        t.join()
    s = svc.stats()
    assert len(out) == 8 and hook.encodes == before + 1 and (s["misses"], s["merged"]) == (1, 7), s
    assert len({id(x) for x in out}) == 8  # each caller owns its copy

    for _ in range(2):
        try:
            svc.get_or_encode("bad", desc="user 1")
            raise AssertionError("no failure")
        except ValueError as exc:
            assert "Reference encode context: user 1" in exc.__notes__
    assert svc.stats()["failed"] == 2 and hook.encodes == before + 3 and not svc._inflight

    # A leader's failure reaches its followers too, and the next caller encodes again.
    hook.gate = threading.Event()
    errors: list[BaseException] = []

    def failing() -> None:
        try:
            svc.get_or_encode("slow bad")
        except ValueError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=failing) for _ in range(4)]
    for t in threads:
        t.start()
    while svc.stats()["merged"] < 7 + 3:
        time.sleep(0.001)
    hook.gate.set()
    for t in threads:
        t.join()
    assert len(errors) == 4 and svc.stats()["failed"] == 3 and hook.encodes == before + 4
    try:
        svc.get_or_encode("slow bad")
    except ValueError:
        pass
    assert hook.encodes == before + 5 and svc.stats()["entries"] == 1
    print("py_service_peer: ok", svc.stats())


if __name__ == "__main__":
    _self_check()
