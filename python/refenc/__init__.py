"""refenc: cached, single-flight reference-audio encoding for voice-cloning TTS serving.

The names and signatures are sglang-omni's (``sglang_omni.scheduling.reference_encoder``); the work
is refenc's C++ service (single-flight, byte-bounded LRU, stats, batching), reached through the
compiled ``refenc._core``. The Python side normalizes the input and computes the key (the hook's
code), then hands both to C++, which releases the GIL for its own work and takes it back only to
call the hook.

    import torch, refenc

    class Codes(refenc.TensorReferenceEncodeHook[str]):
        model_id, model_revision, encoder_id = "fish-s2-pro", "1", "dac"
        encoder_config_hash, artifact_kind = "cfg", "codes"
        def input_key(self, item): return item            # a content digest in real use
        def encode_one(self, item): return torch.tensor([len(item)])

    service = refenc.ReferenceEncodeService(Codes(), max_bytes=64 << 20)
    codes = service.get_or_encode("clip-sha256", desc="user 42")
    service.stats()["hits"]
"""

from __future__ import annotations

import concurrent.futures
import json
import math
from dataclasses import asdict, dataclass
from typing import Any, Generic, Mapping, TypeVar, cast

import torch

from . import _core
from ._artifact import stored_bytes as _stored_bytes
from ._audio import LoadedReference, load_reference

__all__ = [
    "Encoder",
    "KeyedReferenceEncodeHook",
    "ReferenceEncodeHook",
    "ReferenceEncodeKey",
    "ReferenceEncodeService",
    "TensorReferenceEncodeHook",
    "DiskCache",
    "LoadedReference",
    "load_reference",
    "VoiceCache",
    "fresh_exception",
]

InputT = TypeVar("InputT")
ArtifactT = TypeVar("ArtifactT")
StoredT = TypeVar("StoredT")

_UNBOUNDED = _core.UNBOUNDED
_MAX_TIMEOUT_MS = 10**12


@dataclass(frozen=True)
class ReferenceEncodeKey:
    """Everything that can change an encoded reference artifact (see refenc's key contract)."""

    model_id: str
    model_revision: str
    encoder_id: str
    encoder_config_hash: str
    artifact_kind: str
    input_key: str
    options_key: str = ""

    def to_string(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))


class ReferenceEncodeHook(Generic[InputT, ArtifactT, StoredT]):
    """The model semantics the service calls; every method may run on many threads at once.

    A hook may also define ``stored_bytes(stored) -> int`` (the bytes a stored artifact is charged;
    by default tensor data, summed over dicts, lists and tuples) and ``close()`` (called by the
    service's close())."""

    def normalize_input(self, raw_input: Any) -> InputT:
        raise NotImplementedError

    def cache_key(self, item: InputT) -> ReferenceEncodeKey | None:
        raise NotImplementedError

    def encode_one(self, item: InputT) -> ArtifactT:
        raise NotImplementedError

    def store_artifact(self, artifact: ArtifactT) -> StoredT:
        raise NotImplementedError

    def load_artifact(self, stored: StoredT) -> ArtifactT:
        raise NotImplementedError

    def revalidate(self, item: InputT, key: ReferenceEncodeKey) -> bool:
        return True

    def can_encode_batch(self) -> bool:
        return False

    def encode_batch(self, items: list[InputT]) -> list[ArtifactT]:
        return [self.encode_one(item) for item in items]


class KeyedReferenceEncodeHook(ReferenceEncodeHook[InputT, ArtifactT, StoredT]):
    """Defaults for hooks with structured identity and option keys."""

    model_id: str
    model_revision: str
    encoder_id: str
    encoder_config_hash: str
    artifact_kind: str

    def normalize_input(self, raw_input: Any) -> InputT:
        return cast(InputT, raw_input)

    def input_key(self, item: InputT) -> str | None:
        raise NotImplementedError

    def options_key(self, item: InputT) -> str:
        return ""

    def cache_key(self, item: InputT) -> ReferenceEncodeKey | None:
        input_key = self.input_key(item)
        if input_key is None:
            return None
        return ReferenceEncodeKey(
            model_id=self.model_id,
            model_revision=self.model_revision,
            encoder_id=self.encoder_id,
            encoder_config_hash=self.encoder_config_hash,
            artifact_kind=self.artifact_kind,
            input_key=input_key,
            options_key=self.options_key(item),
        )

    def revalidate(self, item: InputT, key: ReferenceEncodeKey) -> bool:
        return self.input_key(item) == key.input_key and self.options_key(item) == key.options_key


class TensorReferenceEncodeHook(KeyedReferenceEncodeHook[InputT, torch.Tensor, torch.Tensor]):
    """Defaults for reference encoders that cache CPU tensor artifacts."""

    storage_dtype: torch.dtype | None = None
    output_dtype: torch.dtype | None = None

    def store_artifact(self, artifact: torch.Tensor) -> torch.Tensor:
        return artifact.detach().to(device="cpu", dtype=self.storage_dtype, copy=True)

    def load_artifact(self, stored: torch.Tensor) -> torch.Tensor:
        return stored.detach().to(dtype=self.output_dtype, copy=True)


def fresh_exception(exc: BaseException) -> BaseException:
    """A new exception of ``exc``'s type with its args and notes (RuntimeError when the type cannot
    be rebuilt from its args)."""
    try:
        fresh = type(exc)(*getattr(exc, "args", ()))
    except Exception:
        fresh = RuntimeError(str(exc))
    for note in getattr(exc, "__notes__", ()):
        add_note = getattr(fresh, "add_note", None)
        if callable(add_note):
            add_note(note)
    return fresh


def _add_context(exc: BaseException, desc: str | None) -> None:
    if not desc:
        return
    add_note = getattr(exc, "add_note", None)
    if callable(add_note):
        add_note(f"Reference encode context: {desc}")


def _service_error(kind: str, message: str, original: BaseException | None, desc: str | None) -> BaseException:
    """What a failed get_or_encode raises: a fresh copy of the hook's own exception (caused by the
    original), or for the service's own failures TimeoutError, ValueError or RuntimeError."""
    if original is not None:
        exc = fresh_exception(original)
        exc.__cause__ = original
    elif kind == "timeout":
        exc = concurrent.futures.TimeoutError(message)
    elif kind == "closed":
        exc = RuntimeError(f"reference encode service is shutting down: {message}")
    elif kind in ("bad_input", "config"):
        exc = ValueError(message)
    else:
        exc = RuntimeError(message)
    _add_context(exc, desc)
    return exc


def _int_setting(name: str, value: Any, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    return value


def _float_setting(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def _str_setting(name: str, value: Any, *, allow_none: bool = True) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str{' or None' if allow_none else ''}, got {type(value).__name__}")
    return value


class _InflightView:
    """``len()`` of the service's in-flight map (the encodes running now)."""

    def __init__(self, core: Any) -> None:
        self._core = core

    def __len__(self) -> int:
        return self._core.inflight()

    def __bool__(self) -> bool:
        return len(self) > 0


class _BatchWorkerView:
    """The batch worker as a thread-like object: ``is_alive()``, ``name``, ``join(timeout)``."""

    def __init__(self, core: Any, name: str) -> None:
        self._core = core
        self.name = name
        self.daemon = True

    def is_alive(self) -> bool:
        return self._core.batch_worker_alive()

    def join(self, timeout: float | None = None) -> None:
        """Waits at most ``timeout`` seconds (5 when None) for the worker to stop; only close() stops it."""
        if self._core.batch_worker_alive():
            self._core.wait_closed(5.0 if timeout is None else float(timeout))


class ReferenceEncodeService(Generic[InputT, ArtifactT, StoredT]):
    """Synchronous, thread-first reference encode service (sglang-omni's API) on refenc's C++ core.

    Beyond sglang-omni's settings: ``cache_dir`` / ``max_disk_bytes`` put the disk tier behind
    memory, ``shared_cache`` (a ``redis://`` URL) with ``shared_cache_prefix``, ``shared_cache_ttl``
    (s), ``shared_cache_timeout`` (ms) and ``shared_cache_insecure`` the Redis tier shared by replicas
    (the CLI's options of the same names). Artifacts kept by those tiers must be a tensor or a dict
    of tensors and strings."""

    LOG_INTERVAL_S = 60.0

    def __init__(
        self,
        hook: ReferenceEncodeHook[InputT, ArtifactT, StoredT],
        *,
        max_items: int | None = 256,
        max_bytes: int | None = 64 * 1024 * 1024,
        timeout_s: float = 130.0,
        log_prefix: str | None = None,
        max_batch_size: int = 1,
        max_batch_wait_ms: float = 0.0,
        batch_worker_name: str = "reference-encode-batch",
        cache_dir: str | None = None,
        max_disk_bytes: int = 2 << 30,
        shared_cache: str | None = None,
        shared_cache_prefix: str = "",
        shared_cache_ttl: int = 0,
        shared_cache_timeout: int = 250,
        shared_cache_insecure: bool = False,
    ) -> None:
        max_items = _int_setting("max_items", max_items, allow_none=True)
        max_bytes = _int_setting("max_bytes", max_bytes, allow_none=True)
        timeout_s = _float_setting("timeout_s", timeout_s)
        max_batch_size = cast(int, _int_setting("max_batch_size", max_batch_size))
        max_batch_wait_ms = _float_setting("max_batch_wait_ms", max_batch_wait_ms)
        log_prefix = _str_setting("log_prefix", log_prefix)
        if max_items is not None and max_items < 1:
            raise ValueError(f"max_items must be >= 1, got {max_items}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {max_bytes}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        if max_batch_wait_ms < 0 or math.isinf(max_batch_wait_ms):
            raise ValueError(f"max_batch_wait_ms must be >= 0 and finite, got {max_batch_wait_ms}")
        cache_dir = _str_setting("cache_dir", cache_dir)
        max_disk_bytes = cast(int, _int_setting("max_disk_bytes", max_disk_bytes))
        shared_cache = _str_setting("shared_cache", shared_cache)
        shared_cache_prefix = cast(str, _str_setting("shared_cache_prefix", shared_cache_prefix, allow_none=False))
        shared_cache_ttl = cast(int, _int_setting("shared_cache_ttl", shared_cache_ttl))
        shared_cache_timeout = cast(int, _int_setting("shared_cache_timeout", shared_cache_timeout))
        if cache_dir is not None and max_disk_bytes < 1:
            raise ValueError(f"max_disk_bytes must be >= 1, got {max_disk_bytes}")
        for method in ("normalize_input", "cache_key", "encode_one", "store_artifact", "load_artifact"):
            if not callable(getattr(hook, method, None)):
                raise TypeError(f"hook must define {method}(), {type(hook).__name__} does not")

        self._hook = hook
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.log_prefix = log_prefix
        self.max_batch_size = max_batch_size
        self.max_batch_wait_ms = max_batch_wait_ms
        self.max_batch_wait_s = max_batch_wait_ms / 1000.0
        self.cache_dir = cache_dir
        self.shared_cache = shared_cache
        can_batch = max_batch_size > 1 and bool(getattr(hook, "can_encode_batch", lambda: False)())
        sizer = getattr(hook, "stored_bytes", None)
        tier = _core.open_tier(
            cache_dir,
            max_disk_bytes,
            shared_cache,
            shared_cache_prefix,
            shared_cache_ttl,
            shared_cache_timeout,
            bool(shared_cache_insecure),
        )
        self._core = _core.Service(
            hook,
            sizer if callable(sizer) else _stored_bytes,
            can_batch,
            _UNBOUNDED if max_items is None else max_items,
            _UNBOUNDED if max_bytes is None else max_bytes,
            min(_MAX_TIMEOUT_MS, max(1, math.ceil(timeout_s * 1000.0))),
            max_batch_size,
            round(max_batch_wait_ms * 1000.0),
            log_prefix or "",
            _service_error,
            tier,
        )
        self._batch_thread = _BatchWorkerView(self._core, batch_worker_name) if self._core.batching else None
        self._inflight = _InflightView(self._core)

    @property
    def hook(self) -> ReferenceEncodeHook[InputT, ArtifactT, StoredT]:
        return self._hook

    @property
    def batching_enabled(self) -> bool:
        return self._core.batching

    @property
    def batching(self) -> bool:
        return self._core.batching

    def get_or_encode(self, raw_input: Any, *, desc: str | None = None) -> ArtifactT:
        """The artifact for ``raw_input``, owned by the caller. Raises the hook's own exception type
        (a fresh object per caller, noted with ``desc``), ``concurrent.futures.TimeoutError`` for a
        follower that waited ``timeout_s`` for its leader, RuntimeError after close()."""
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"desc must be a str or None, got {type(desc).__name__}")
        hook = self._hook
        item = hook.normalize_input(raw_input)
        key = hook.cache_key(item)
        if key is not None and not isinstance(key, ReferenceEncodeKey):
            raise TypeError(f"cache_key must return a ReferenceEncodeKey or None, got {type(key).__name__}")
        return self._core.get_or_encode(item, key, desc or None)

    def stats(self) -> dict[str, int]:
        """Counters and gauges: sglang-omni's hits, misses, merged, entries, bytes, evictions, failed,
        uncacheable, batches, batched_items, and refenc's others (timeouts, oversize, disk_*,
        shared_*, ...)."""
        return self._core.stats()

    def prometheus_text(self, labels: Mapping[str, str] | None = None, prefix: str = "refenc_") -> str:
        """The stats in the Prometheus text exposition format, with ``labels`` on every sample."""
        pairs = []
        for name, value in (labels or {}).items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError("labels must map str to str")
            pairs.append((name, value))
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
        return self._core.prometheus_text(pairs, prefix)

    def clear(self) -> None:
        """Drops every memory entry (in-flight encodes and the second tiers are untouched)."""
        self._core.clear()

    def encode_batch(self, items: list[InputT]) -> list[Any]:
        """The hook's encode_batch, retried per item on failure (an item's exception in its place),
        as sglang-omni's service offers it; the service's own batching does not use this."""
        try:
            artifacts = self._hook.encode_batch(items)
            if len(artifacts) != len(items):
                raise RuntimeError(f"encode_batch returned {len(artifacts)} artifacts for {len(items)} items")
            return list(artifacts)
        except Exception:
            pass
        results: list[Any] = []
        for item in items:
            try:
                results.append(self._hook.encode_one(item))
            except Exception as exc:
                results.append(exc)
        return results

    def can_encode_batch(self) -> bool:
        return bool(self._hook.can_encode_batch())

    def close(self) -> None:
        """Stops the batch worker (queued requests fail; a batch in the hook finishes), waiting for it
        at most 5 s; later get_or_encode calls raise RuntimeError. Calls the hook's close() if any."""
        self._core.close(5.0)
        close = getattr(self._hook, "close", None)
        if callable(close):
            close()


class DiskCache:
    """The disk tier's folder, as ``refenc cache`` maintains it: ``root`` (default: $REFENC_CACHE_DIR,
    $XDG_CACHE_HOME/refenc, ~/.cache/refenc) holds the entries a service with ``cache_dir=root``
    writes. An unusable root gives a disabled cache (``enabled`` False, ``disabled_reason``)."""

    def __init__(self, root: str | None = None, *, max_disk_bytes: int = 2 << 30) -> None:
        root = _str_setting("root", root)
        max_disk_bytes = cast(int, _int_setting("max_disk_bytes", max_disk_bytes))
        if max_disk_bytes < 1:
            raise ValueError(f"max_disk_bytes must be >= 1, got {max_disk_bytes}")
        self._core = _core.DiskCache(root, max_disk_bytes)

    @property
    def root(self) -> str:
        return self._core.root

    @property
    def enabled(self) -> bool:
        return self._core.enabled

    @property
    def disabled_reason(self) -> str:
        return self._core.disabled_reason

    def stats(self) -> dict[str, Any]:
        """Entries and bytes, in all and per model folder (``refenc cache stats``)."""
        return self._core.scan()

    def clear(self, *, model: str | None = None) -> int:
        """Deletes every entry, or one model's (``refenc cache clear --model``); how many were deleted."""
        return self._core.clear(_str_setting("model", model))

    def gc(self, *, max_bytes: int | None = None) -> dict[str, int]:
        """Evicts least recently used entries down to ``max_bytes`` (default: max_disk_bytes) and
        deletes stale temporary and lock files (``refenc cache gc --max-bytes``)."""
        max_bytes = _int_setting("max_bytes", max_bytes, allow_none=True)
        if max_bytes is not None and max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        return self._core.gc(max_bytes)

    def verify(self, *, delete: bool = False) -> dict[str, Any]:
        """Reads and checks every entry; ``delete`` removes the corrupt ones (``refenc cache verify
        --delete``)."""
        return self._core.verify(bool(delete))


class VoiceCache:
    """Registered voices (the CLI's ``refenc voice``): artifacts keyed by model, voice name (case
    insensitive), version and artifact kind, pinned in memory and persisted under ``root``, and with
    ``shared_cache`` also kept in Redis so every replica sees adds and removals. Artifacts are a
    tensor or a dict of tensors and strings; each get returns new objects."""

    def __init__(
        self,
        root: str | None = None,
        *,
        max_voices: int = 1000,
        persist: bool = True,
        max_entry_bytes: int = 256 << 20,
        shared_cache: str | None = None,
        shared_cache_prefix: str = "",
        shared_cache_ttl: int = 0,
        shared_cache_timeout: int = 250,
        shared_cache_insecure: bool = False,
    ) -> None:
        root = _str_setting("root", root)
        max_voices = cast(int, _int_setting("max_voices", max_voices))
        max_entry_bytes = cast(int, _int_setting("max_entry_bytes", max_entry_bytes))
        if max_voices < 1:
            raise ValueError(f"max_voices must be >= 1, got {max_voices}")
        if max_entry_bytes < 1:
            raise ValueError(f"max_entry_bytes must be >= 1, got {max_entry_bytes}")
        self._core = _core.VoiceCache(
            root,
            max_voices,
            bool(persist),
            max_entry_bytes,
            _str_setting("shared_cache", shared_cache),
            _str_setting("shared_cache_prefix", shared_cache_prefix, allow_none=False),
            _int_setting("shared_cache_ttl", shared_cache_ttl),
            _int_setting("shared_cache_timeout", shared_cache_timeout),
            bool(shared_cache_insecure),
        )

    def put(self, model: str, voice: str, artifact: Any, *, version: str = "1", artifact_kind: str = "codes") -> bool:
        """Registers ``artifact``; True when written to disk (to Redis when shared). ValueError for a bad
        voice name or when max_voices voices are registered already."""
        return self._core.put(model, voice, artifact, version, artifact_kind)

    def get(self, model: str, voice: str, *, version: str = "1", artifact_kind: str = "codes") -> Any:
        """The voice's artifact (new objects), or None."""
        return self._core.get(model, voice, version, artifact_kind)

    def clear_voice(self, voice: str, *, model: str | None = None) -> bool:
        """Removes a voice (of one model only, when given); True when anything was removed."""
        return self._core.clear_voice(voice, model)

    def clear(self) -> None:
        self._core.clear()

    def voice_count(self) -> int:
        return self._core.voice_count()

    def list(self, voice: str | None = None) -> list[dict[str, Any]]:
        return self._core.list(voice)

    def stats(self) -> dict[str, int]:
        return self._core.stats()

    @property
    def persistent(self) -> bool:
        return self._core.persistent

    @property
    def folder(self) -> str:
        return self._core.folder


from ._encoder import Encoder  # noqa: E402  (subclasses ReferenceEncodeHook, defined above)
