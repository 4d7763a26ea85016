"""Hit path from Python: refenc's service (C++ core, Python hook) against the pure-Python design.

Same workload for both, in one process: 64 keys encoded once (tensor artifacts of 2 longs), then
THREADS threads each make CALLS_PER_THREAD calls over the keys, every call a memory hit that
returns a clone. The pure-Python design is /work/shared/bench/py_design_peer.py (threading.Lock,
OrderedDict LRU, Future single-flight); refenc's hook does what an sglang-omni hook does on a hit:
normalize_input, cache_key (a new ReferenceEncodeKey per call), and load_artifact (a clone); a third
column runs the same hook with its keys made once per input. Runs alternate between them, REPEATS
times each; the best run of each is reported, with the ratios to the pure-Python design.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_py_hit.py 16 5000 [--repeats 3]
        [--peer /work/shared/bench/py_design_peer.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import threading
import time
from typing import Any, Callable

import torch

import refenc

KEYS = 64


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("threads", type=int, nargs="?", default=1)
    parser.add_argument("calls_per_thread", type=int, nargs="?", default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer", default="/work/shared/bench/py_design_peer.py")
    args = parser.parse_args()

    spec = importlib.util.spec_from_file_location("py_design_peer", args.peer)
    assert spec and spec.loader, f"cannot load {args.peer}"
    peer_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer_module)
    peer = peer_module.Service()
    encode = lambda k: torch.full((2,), k, dtype=torch.long)  # noqa: E731
    for k in range(KEYS):
        peer.get_or_encode(k, encode)

    service = refenc.ReferenceEncodeService(_HitHook())
    memo = refenc.ReferenceEncodeService(_MemoKeyHook())
    for k in range(KEYS):
        service.get_or_encode(k)
        memo.get_or_encode(k)

    # Both return the same artifact for a key, each call a copy of its own.
    assert torch.equal(service.get_or_encode(5), peer.get_or_encode(5, encode))

    ours: list[float] = []
    memo_runs: list[float] = []
    theirs: list[float] = []
    for _ in range(args.repeats):
        ours.append(_run(service.get_or_encode, args.threads, args.calls_per_thread))
        theirs.append(_run(lambda k: peer.get_or_encode(k, encode), args.threads, args.calls_per_thread))
        memo_runs.append(_run(memo.get_or_encode, args.threads, args.calls_per_thread))
    stats = service.stats()
    assert stats["misses"] == KEYS and stats["hits"] >= args.repeats * args.threads * args.calls_per_thread

    best_ours, best_theirs, best_memo = max(ours), max(theirs), max(memo_runs)
    print(
        f"threads={args.threads} calls_per_thread={args.calls_per_thread} repeats={args.repeats} "
        f"refenc_calls_per_s={best_ours:.0f} py_design_calls_per_s={best_theirs:.0f} "
        f"ratio={best_ours / best_theirs:.2f} "
        f"refenc_memo_keys_calls_per_s={best_memo:.0f} memo_ratio={best_memo / best_theirs:.2f}\n"
        f"  runs: refenc={[round(x) for x in ours]} py_design={[round(x) for x in theirs]} "
        f"refenc_memo_keys={[round(x) for x in memo_runs]}"
    )


if __name__ == "__main__":
    main()
