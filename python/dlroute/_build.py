"""Finding libdlroute, and building it from a checkout: the one place that
says where the library comes from (_native loads what this finds).

The order, first match wins:

1. ``$DLROUTE_LIB``: a prebuilt library, used as it is.
2. A dlroute checkout around the package (``python/dlroute`` in the
   repository): the library built from that source, cached by a hash of
   every file the build reads, so a stale library is never loaded. The
   first import after a change builds it (``go build -buildmode=c-shared``,
   about a minute cold), with a line on stderr; the cache is
   ``$DLROUTE_CACHE`` or the user cache directory's ``dlroute/lib``.
3. The library installed inside the package (``pip install ./python``
   builds it into the wheel).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .errors import LibraryError

ENV_LIB = "DLROUTE_LIB"
LIB_NAME = "libdlroute.dylib" if sys.platform == "darwin" else "libdlroute.so"

ENV_CACHE = "DLROUTE_CACHE"
MODULE_PATH = "github.com/dlroute/dlroute"

# Directories of the checkout that the library's build never reads.
_SKIP_DIRS = {".git", ".ci", "python", "testdata", "testout", "node_modules", "site", "__pycache__"}
# Suffixes of the files it reads: Go and C source, and the embedded rules.
_SOURCE_SUFFIXES = (".go", ".c", ".h")


def find_library() -> Path:
    """Returns the path of the libdlroute to load, building it first when
    a checkout's cached build is missing.

    Raises:
        LibraryError: ``$DLROUTE_LIB`` names no file (``no_library``), there
            is neither a checkout nor an installed library (``no_library``),
            or the build fails (``build_failed``).
    """
    named = os.environ.get(ENV_LIB)
    if named:
        p = Path(named)
        if not p.is_file():
            raise LibraryError("no_library", f"${ENV_LIB} names {named}, which is not a file")
        return p
    src = source_root()
    if src is not None:
        return cached_build(src)
    installed = Path(__file__).with_name("_lib") / LIB_NAME
    if installed.is_file():
        return installed
    raise LibraryError(
        "no_library",
        "libdlroute is neither installed with the package nor buildable: this copy of the package is not inside a "
        f"dlroute checkout. Install it with `pip install ./python` from a checkout, or set ${ENV_LIB} to a built "
        "libdlroute (go build -trimpath -buildmode=c-shared -o libdlroute.so ./libdlroute)",
    )


def source_root() -> Path | None:
    """The dlroute checkout this package sits in (the directory above
    ``python/``), or None."""
    root = Path(__file__).resolve().parent.parent.parent
    try:
        gomod = (root / "go.mod").read_text(encoding="utf-8")
    except OSError:
        return None
    if f"module {MODULE_PATH}\n" not in gomod or not (root / "libdlroute").is_dir():
        return None
    return root


def source_hash(root: Path) -> str:
    """A SHA-256 of what building ./libdlroute reads: go.mod, go.sum (which
    pin every dependency), the Go and C source of the module's packages
    the library imports, and the embedded rules. It over-approximates
    (a few packages the library does not import are hashed too): a
    needless rebuild, never a stale library."""
    import hashlib
    import platform

    h = hashlib.sha256()
    h.update(f"{sys.platform} {platform.machine()}\n".encode())
    files: list[Path] = [root / "go.mod", root / "go.sum"]
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        top = rel.split(os.sep, 1)[0]
        if rel == ".":
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            continue
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS or top == "rules")
        for name in sorted(filenames):
            if top == "rules" or (name.endswith(_SOURCE_SUFFIXES) and not name.endswith("_test.go")):
                files.append(Path(dirpath, name))
    for f in files:
        data = f.read_bytes()
        h.update(f"{f.relative_to(root).as_posix()} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


def cache_dir() -> Path:
    named = os.environ.get(ENV_CACHE)
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or (
        Path.home() / ("Library/Caches" if sys.platform == "darwin" else ".cache"))
    return Path(base) / "dlroute" / "lib"


def cached_build(root: Path) -> Path:
    """The library built from the checkout at root, from the cache or
    built now."""
    import subprocess
    import tempfile

    digest = source_hash(root)
    cache = cache_dir()
    path = cache / f"libdlroute-py-{digest[:16]}{Path(LIB_NAME).suffix}"
    if path.is_file():
        return path
    print(f"dlroute: building libdlroute from {root} (once per source change, about a minute)...", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="build-", suffix=Path(LIB_NAME).suffix, dir=cache)
    os.close(fd)
    try:
        env = dict(os.environ, CGO_ENABLED="1")
        try:
            done = subprocess.run(["go", "build", "-trimpath", "-buildmode=c-shared", "-o", tmp, "./libdlroute"],
                                  cwd=root, env=env, capture_output=True, text=True)
        except FileNotFoundError:
            raise LibraryError("build_failed", "building libdlroute needs Go 1.26 or newer (`go` is not on PATH) and "
                               f"a C compiler (gcc or clang); or set ${ENV_LIB} to a built library") from None
        if done.returncode != 0:
            raise LibraryError("build_failed", f"go build ./libdlroute failed:\n{done.stderr.strip()}")
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp[: -len(Path(LIB_NAME).suffix)] + ".h"):
            try:
                os.remove(leftover)
            except FileNotFoundError:
                pass
    _prune(cache, keep=3)
    return path


def _prune(cache: Path, keep: int) -> None:
    """Removes all but the newest keep builds: one per branch switched
    between, not one per edit forever."""
    builds = sorted(cache.glob("libdlroute-py-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in builds[keep:]:
        try:
            old.unlink()
        except OSError:
            pass
