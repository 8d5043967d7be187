"""Fill pytest's cache of rewritten test modules once, before the workers start (tests/run).

pytest rewrites the asserts of every test module and conftest.py it imports (so a failing
assert shows its values) and keeps the result in a checked-hash pyc beside the ordinary ones
(under PYTHONPYCACHEPREFIX when set). On a fresh clone the cache is empty, and every xdist
worker would rewrite every module itself, at the same time: here they are rewritten once,
shared out over the cores, and each worker reads them. The pyc carries the source's hash, so
one out of date is rewritten by pytest as before; a failure here (pytest's internals moved)
leaves the cache as it was, and costs nothing but the time. The modules are rewritten with
pytest's default settings, which this project keeps: with `enable_assertion_pass_hook` set in
pyproject.toml (a rewrite the hash would not tell apart) nothing is written here.

    python -m tests.rewrite_cache [DIRECTORY]
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def rewrite(path: str) -> bool:
    """The module at `path` rewritten as pytest's default configuration rewrites it, its pyc
    written where pytest looks for it; False if that could not be done."""
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp, get_cache_dir

        fn = Path(path)
        source_hash, code = _rewrite_test(fn, None)  # type: ignore[arg-type] # None: the defaults
        cache = get_cache_dir(fn)
        cache.mkdir(parents=True, exist_ok=True)
        pyc = cache / (fn.name[:-3] + PYC_TAIL)
        partial = Path(f"{pyc}.{os.getpid()}")
        with open(partial, "wb") as fp:
            _write_pyc_fp(fp, source_hash, code)
        partial.replace(pyc)
        return True
    except Exception:  # noqa: BLE001 - a module left to pytest to rewrite, as without this
        return False


def plugin_modules() -> list[Path]:
    """The modules of the distributions that install pytest plugins (pytest11 entry points):
    pytest rewrites their packages, as it does the tests."""
    from importlib.metadata import entry_points

    found: set[Path] = set()
    for point in entry_points(group="pytest11"):
        dist = point.dist
        if dist is None:
            continue
        for file in dist.files or []:
            if file.suffix == ".py" and ".." not in file.parts:
                found.add(Path(str(dist.locate_file(file))).resolve())
    return sorted(p for p in found if p.exists())


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "tests").resolve()
    if "enable_assertion_pass_hook" in (root.parent / "pyproject.toml").read_text():
        print("tests/rewrite_cache: nothing written: pytest's rewrite is not the default one here")
        return 0
    tests = [p for p in root.rglob("*.py") if p.name.startswith("test_") or p.name == "conftest.py"]
    paths = [str(p) for p in sorted(tests) + plugin_modules()]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = sum(pool.map(rewrite, paths, chunksize=8))
    print(f"tests/rewrite_cache: {done} of {len(paths)} modules rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
