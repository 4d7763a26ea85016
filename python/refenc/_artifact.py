"""Entry form of Python artifacts, for the disk tier, the Redis tier and the registered voices.

A stored artifact that a persistent tier keeps must be a ``torch.Tensor`` or a ``dict`` whose keys
are ``str`` and whose values are tensors or ``str``; tensors of dtype uint8, int16, int32, int64 or
float32, moved to the CPU. The compiled core copies the bytes into refenc's own entries.

    parts = to_entry(torch.tensor([1, 2]))   # ([("tensor", "int64", [2], b"...")], {"python_form": "tensor"})
    from_entry(*parts)                       # tensor([1, 2])
    stored_bytes({"codes": torch.zeros(4, dtype=torch.int16), "text": "hi"})   # 8 + 2
"""

from __future__ import annotations

import sys
from typing import Any

import torch

_FORM_KEY = "python_form"
_DTYPES = {
    torch.uint8: "uint8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.float32: "float32",
}
_BY_NAME = {name: dtype for dtype, name in _DTYPES.items()}


def _tensor_part(name: str, tensor: torch.Tensor) -> tuple[str, str, list[int], bytes]:
    dtype = _DTYPES.get(tensor.dtype)
    if dtype is None:
        raise TypeError(
            f"tensor {name!r} has dtype {tensor.dtype}, which a persistent tier cannot keep "
            f"(uint8, int16, int32, int64, float32)"
        )
    cpu = tensor.detach().to("cpu").contiguous()
    return (name, dtype, list(cpu.shape), cpu.numpy().tobytes())


def to_entry(obj: Any) -> tuple[list[tuple[str, str, list[int], bytes]], dict[str, str]]:
    """The entry form of a stored artifact; TypeError when it has none."""
    if isinstance(obj, torch.Tensor):
        return [_tensor_part("tensor", obj)], {_FORM_KEY: "tensor"}
    if isinstance(obj, dict):
        tensors: list[tuple[str, str, list[int], bytes]] = []
        meta: dict[str, str] = {_FORM_KEY: "dict"}
        for name, value in obj.items():
            if not isinstance(name, str) or name == _FORM_KEY:
                raise TypeError(f"artifact dict key {name!r} must be a str other than {_FORM_KEY!r}")
            if isinstance(value, torch.Tensor):
                tensors.append(_tensor_part(name, value))
            elif isinstance(value, str):
                meta[name] = value
            else:
                raise TypeError(f"artifact dict value {name!r} must be a tensor or a str, got {type(value).__name__}")
        return tensors, meta
    raise TypeError(f"a persistent tier keeps a tensor or a dict of tensors and strings, got {type(obj).__name__}")


def _tensor(dtype_name: str, shape: list[int], data: bytes) -> torch.Tensor:
    dtype = _BY_NAME[dtype_name]
    if len(data) == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(shape)


def from_entry(tensors: list[tuple[str, str, list[int], bytes]], meta: dict[str, str]) -> Any:
    """The Python artifact of an entry (new tensors that own their memory)."""
    form = meta.get(_FORM_KEY)
    if form == "tensor" and len(tensors) == 1:
        _, dtype, shape, data = tensors[0]
        return _tensor(dtype, shape, data)
    out: dict[str, Any] = {name: _tensor(dtype, shape, data) for name, dtype, shape, data in tensors}
    out.update({k: v for k, v in meta.items() if k != _FORM_KEY})
    return out


def stored_bytes(obj: Any) -> int:
    """Bytes a stored artifact is charged in the memory tier: tensor data, string and bytes lengths,
    summed over dicts, lists and tuples; ``nbytes`` when an object has it; sys.getsizeof otherwise."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return len(obj)
    if isinstance(obj, str):
        return len(obj.encode("utf-8", "surrogatepass"))
    if isinstance(obj, dict):
        return sum(stored_bytes(k) + stored_bytes(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return sum(stored_bytes(v) for v in obj)
    nbytes = getattr(obj, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    return sys.getsizeof(obj)
