"""The Redis tier shared by replicas, from Python, against a private redis-server on a free loopback
port in a temporary folder that the fixture starts and always stops. Nothing else is connected to."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import torch

import refenc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (scripts/setup.sh --test installs it)")
    port = _free_port()
    data = tmp_path / "redis"
    data.mkdir()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(data), "--daemonize", "no", "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _answers(port):  # readiness of an external process: nothing to wait on but the port
            assert server.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not answer within 10 s"
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}"
    finally:
        server.kill()
        server.wait(timeout=30)


class _Hook(refenc.TensorReferenceEncodeHook[str]):
    model_id = "shared"
    model_revision = "1"
    encoder_id = "enc"
    encoder_config_hash = "cfg"
    artifact_kind = "codes"

    def __init__(self) -> None:
        self.encodes = 0

    def input_key(self, item: str) -> str | None:
        return item

    def encode_one(self, item: str) -> torch.Tensor:
        self.encodes += 1
        return torch.tensor([len(item), 42], dtype=torch.int32)


def test_a_replica_reads_what_another_encoded(redis_url: str, tmp_path: Path) -> None:
    a_hook, b_hook = _Hook(), _Hook()
    a = refenc.ReferenceEncodeService(a_hook, shared_cache=redis_url, shared_cache_prefix="test-a")
    b = refenc.ReferenceEncodeService(
        b_hook, shared_cache=redis_url, shared_cache_prefix="test-a", cache_dir=str(tmp_path / "disk-b")
    )
    made = a.get_or_encode("clip-1")
    assert a.stats()["shared_writes"] == 1
    got = b.get_or_encode("clip-1")
    assert b_hook.encodes == 0 and torch.equal(made, got) and got.dtype == torch.int32
    assert b.stats()["shared_hits"] == 1

    # Another deployment prefix shares nothing.
    c_hook = _Hook()
    c = refenc.ReferenceEncodeService(c_hook, shared_cache=redis_url, shared_cache_prefix="test-c")
    c.get_or_encode("clip-1")
    assert c_hook.encodes == 1


def test_a_server_gone_means_misses_not_errors(redis_url: str) -> None:
    hook = _Hook()
    service = refenc.ReferenceEncodeService(hook, shared_cache=redis_url, shared_cache_timeout=100)
    service.get_or_encode("before")
    port = int(redis_url.rsplit(":", 1)[1])
    # Stop the server by asking it to (it is ours, on loopback).
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(b"SHUTDOWN NOSAVE\r\n")
        s.recv(16)
    assert service.get_or_encode("after").tolist() == [5, 42]
    assert hook.encodes == 2
    assert service.stats()["shared_errors"] >= 1


def test_voices_reach_every_replica(redis_url: str, tmp_path: Path) -> None:
    here = refenc.VoiceCache(str(tmp_path / "here"), shared_cache=redis_url)
    there = refenc.VoiceCache(str(tmp_path / "there"), shared_cache=redis_url)
    codes = torch.tensor([[7, 8]], dtype=torch.long)
    assert here.put("fish-s2-pro", "alice", codes) is True
    got: Any = there.get("fish-s2-pro", "alice")
    assert torch.equal(got, codes)
    assert here.clear_voice("alice") is True
    assert there.get("fish-s2-pro", "alice") is None
