"""Paths the suite runs against: the source tree, ../shared and the CLI of the same build as
the library (ctest sets AM_SOURCE, AM_SHARED, AM_BIN and ANYMOVE_LIBRARY)."""
import os
import sys

import pytest

SOURCE = os.environ.get("AM_SOURCE") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("AM_SHARED") or os.path.join(SOURCE, "..", "shared")
BIN = os.environ.get("AM_BIN") or os.path.join(SOURCE, "build", "anymove")
sys.path.insert(0, os.path.join(SOURCE, "python"))
if not os.path.isdir(SHARED):
    raise RuntimeError(f"the shared data folder is missing: {SHARED} (set AM_SHARED)")


@pytest.fixture
def walker():
    return os.path.join(SOURCE, "examples", "walker")


@pytest.fixture
def fox():
    return os.path.join(SHARED, "data", "gltf", "khronos_fox", "Fox.glb")
