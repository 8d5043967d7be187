"""Hatchling's hooks for flagman (pyproject.toml, [tool.hatch.*.hooks.custom]): the version of every
build, counted from the git repository, and bot/_build.json, which carries the version and the
commit into the sdist and the wheel (bot/buildinfo.py says why and how).

Built from a git clone, the version is git's; built from an unpacked sdist (no .git), it is the
one the sdist carries in bot/_build.json.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.metadata.plugin.interface import MetadataHookInterface


def _buildinfo(root: str) -> ModuleType:
    """bot/buildinfo.py, loaded by its path (importing the bot package would need its dependencies)."""
    path = Path(root) / "bot" / "buildinfo.py"
    spec = importlib.util.spec_from_file_location("_flagman_buildinfo", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses looks its module up there
    spec.loader.exec_module(module)
    return module


class CustomMetadataHook(MetadataHookInterface):
    """[project] version: RELEASE.COMMITS of the commit built."""

    def update(self, metadata: dict[str, Any]) -> None:
        metadata["version"] = _buildinfo(self.root).source_build(Path(self.root)).version


class CustomBuildHook(BuildHookInterface):
    """bot/_build.json into the sdist and the wheel, unless the tree is an unpacked sdist that
    has it already (then it is packed with the rest of bot/)."""

    _folder: str | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        info = _buildinfo(self.root)
        if version == "editable" or (Path(self.root) / "bot" / info.BUILD_FILE).is_file():
            return  # an editable install asks git when asked (bot.buildinfo.current)
        self._folder = tempfile.mkdtemp(prefix="flagman-build-")
        path = Path(self._folder) / info.BUILD_FILE
        info.write(info.source_build(Path(self.root)), path)
        build_data["force_include"][str(path)] = f"bot/{info.BUILD_FILE}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
