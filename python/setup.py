"""Puts libanymove.so inside the package, so an installed anymove needs no build tree.

The library comes from ANYMOVE_LIBRARY, else ../build/libanymove.so (`make build`). Offline:
    pip install --no-build-isolation ./python
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        src = os.environ.get("ANYMOVE_LIBRARY") or os.path.join(HERE, "..", "build", "libanymove.so")
        if not os.path.exists(src):
            raise SystemExit(f"anymove: {src} not found: run `make build` first (or set ANYMOVE_LIBRARY)")
        dst = os.path.join(self.build_lib, "anymove", "libanymove.so")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.realpath(src), dst)


setup(cmdclass={"build_py": BuildWithLibrary}, package_data={"anymove": ["libanymove.so"]})
