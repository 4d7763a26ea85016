"""pytest setup for refenc's Python tests.

sglang-omni's own tests import ``sglang_omni.scheduling.reference_encoder``; this maps that module
onto ``refenc`` (the same names), so the copies of those tests here run unmodified against refenc.
Run with the package on the path: ``PYTHONPATH=build/release/python /usr/bin/python3 -m pytest -q
tests/python``.
"""

from __future__ import annotations

import sys
import types

import refenc

_package = types.ModuleType("sglang_omni")
_package.__path__ = []  # a package, so the submodules below resolve
_scheduling = types.ModuleType("sglang_omni.scheduling")
_scheduling.__path__ = []
_package.scheduling = _scheduling
_scheduling.reference_encoder = refenc
sys.modules.setdefault("sglang_omni", _package)
sys.modules.setdefault("sglang_omni.scheduling", _scheduling)
sys.modules.setdefault("sglang_omni.scheduling.reference_encoder", refenc)
