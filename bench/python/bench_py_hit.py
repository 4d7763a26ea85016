"""Hit path from Python: refenc's service (C++ core, Python hook) against the upstream design in Python.

Same workload and the same hook objects for both, in one process: 64 keys encoded once (tensor
artifacts of 2 longs), then THREADS threads each make CALLS_PER_THREAD calls over the keys, every call
a memory hit that returns a clone. The peer is the seed's service in pure Python
(bench/python/py_service_peer.py: threading.Lock, OrderedDict LRU bounded by items and bytes, Future
single-flight), found relative to this repository. Both run the hook's work of an sglang-omni hit
on every call: normalize_input, cache_key (a new ReferenceEncodeKey per call) and load_artifact (a
clone); a second pair of columns gives both the same hook with its keys made once per input. Runs
alternate between the four, in a rotating order, REPEATS times each; the best run of each is
reported as calls/s and µs per call (wall time over all threads' calls), with the spread of its runs
((best - worst) / best) and the ratio refenc / peer in calls/s (above 1: refenc is faster).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_py_hit.py 16 5000 [--repeats 3]
        [--peer bench/python/py_service_peer.py]

A --peer module must define Service(hook, *, max_items, max_bytes, timeout_s) with
get_or_encode(raw) and stats() (hits, misses), as py_service_peer.py does.
"""

from __future__ import annotations

import argparse
import importlib.util
import threading
import time
from pathlib import Path
from typing import Any, Callable

import torch

import refenc

KEYS = 64
REPO = Path(__file__).resolve().parents[2]
DEFAULT_PEER = REPO / "bench" / "python" / "py_service_peer.py"


class _HitHook(refenc.ReferenceEncodeHook[int, torch.Tensor, torch.Tensor]):
    def normalize_input(self, raw_input: Any) -> int:
        return raw_input

    def cache_key(self, item: int) -> refenc.ReferenceEncodeKey:
        return refenc.ReferenceEncodeKey("bench", "1", "enc", "cfg", "codes", str(item))

    def encode_one(self, item: int) -> torch.Tensor:
        return torch.full((2,), item, dtype=torch.long)

    def store_artifact(self, artifact: torch.Tensor) -> torch.Tensor:
        return artifact.detach().to("cpu", copy=True)

    def load_artifact(self, stored: torch.Tensor) -> torch.Tensor:
        return stored.clone()


class _MemoKeyHook(_HitHook):
    """The same hook with its keys made once per input (as a hook that digests audio would keep them)."""

    def __init__(self) -> None:
        self.keys = {k: super(_MemoKeyHook, self).cache_key(k) for k in range(KEYS)}

    def cache_key(self, item: int) -> refenc.ReferenceEncodeKey:
        return self.keys[item]


def _run(call: Callable[[int], Any], threads: int, per_thread: int) -> float:
    """Calls per second of `threads` threads each making `per_thread` calls."""
    start = threading.Barrier(threads + 1)

    def work(tid: int) -> None:
        start.wait()
        for i in range(per_thread):
            call((i + tid) % KEYS)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    return threads * per_thread / (time.perf_counter() - t0)


def _load_peer(path: Path) -> Any:
    """The peer module at `path` (a file, not a package)."""
    spec = importlib.util.spec_from_file_location("py_service_peer", path)
    assert spec and spec.loader, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _summary(runs: list[float]) -> str:
    best = max(runs)
    return f"{best:.0f}/s {1e6 / best:.2f}us spread={(best - min(runs)) / best * 100:.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("threads", type=int, nargs="?", default=1)
    parser.add_argument("calls_per_thread", type=int, nargs="?", default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer", type=Path, default=DEFAULT_PEER,
                        help=f"the pure-Python service to compare with (default {DEFAULT_PEER.relative_to(REPO)})")
    args = parser.parse_args()
    peer_module = _load_peer(args.peer.resolve())

    hook, memo_hook = _HitHook(), _MemoKeyHook()
    settings = dict(max_items=256, max_bytes=64 << 20, timeout_s=130.0)
    services: dict[str, Any] = {
        "refenc": refenc.ReferenceEncodeService(hook, **settings),
        "peer": peer_module.Service(hook, **settings),
        "refenc_memo_keys": refenc.ReferenceEncodeService(memo_hook, **settings),
        "peer_memo_keys": peer_module.Service(memo_hook, **settings),
    }
    for service in services.values():
        for k in range(KEYS):
            service.get_or_encode(k)

    # All return the same artifact for a key, each call a copy of its own.
    first = services["refenc"].get_or_encode(5)
    for name, service in services.items():
        other = service.get_or_encode(5)
        assert torch.equal(first, other) and other.data_ptr() != first.data_ptr(), name

    runs: dict[str, list[float]] = {name: [] for name in services}
    names = list(services)
    for r in range(args.repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            runs[name].append(_run(services[name].get_or_encode, args.threads, args.calls_per_thread))
    for name, service in services.items():
        stats = service.stats()
        assert stats["misses"] == KEYS and stats["hits"] >= args.repeats * args.threads * args.calls_per_thread, name

    best = {name: max(r) for name, r in runs.items()}
    print(
        f"threads={args.threads} calls_per_thread={args.calls_per_thread} repeats={args.repeats} "
        f"peer={args.peer}\n"
        f"  refenc={_summary(runs['refenc'])} peer={_summary(runs['peer'])} "
        f"ratio={best['refenc'] / best['peer']:.2f}\n"
        f"  refenc_memo_keys={_summary(runs['refenc_memo_keys'])} peer_memo_keys={_summary(runs['peer_memo_keys'])} "
        f"memo_ratio={best['refenc_memo_keys'] / best['peer_memo_keys']:.2f}\n"
        f"  runs: " + " ".join(f"{name}={[round(x) for x in r]}" for name, r in runs.items())
    )


if __name__ == "__main__":
    main()
