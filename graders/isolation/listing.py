"""What a worker's filesystem holds, listed in: the same list under bubblewrap and under process limits.

Nothing of the machine is there unless this list names it:

- the system's shared libraries: the folders the dynamic loader reads (the multiarch folders, ``/usr/lib64``, the
  folders of ``ld.so.conf``) and its cache, with any Python installation inside them covered (a library folder
  may hold ``python3.11/dist-packages``), and the shell and ``sleep`` the fork server's placeholder runs;
- the interpreter: its executable (and the links that lead to it), libpython where it is shared, the standard
  library with its extension modules, and the environment's ``pyvenv.cfg``; a ``site-packages`` or
  ``dist-packages`` folder inside the standard library's is covered;
- of all the installed packages, numpy's files alone, and, for the workers whose stand-ins or student code compute
  with torch, torch's and those of the distributions torch requires (its metadata says which).

So another virtual environment, the base interpreter's site-packages, the system's or a user's are simply not there,
and no torch is there for the numpy tasks' workers, whatever path leads to one. The worker's own code, the packages
it serves, its working folder, ``/tmp``, ``/dev`` and ``/proc`` are added by each isolation (``bubblewrap.command``,
``sandbox.Root``). Each entry is bound read-only at its own path, so every path a worker uses is the judge's.
"""

from __future__ import annotations

import csv
import functools
import glob
import importlib.metadata
import importlib.util
import os
import re
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

# What the fork server's placeholder runs inside a sandbox (graders.isolation.fork_servers.PLACEHOLDER).
PROGRAMS = ("/bin/sh", "sleep")
PROGRAMS_PATH = "/usr/bin:/bin"
# Folders that hold installed Python packages: covered wherever a listed folder holds one.
PACKAGE_FOLDERS = ("site-packages", "dist-packages")
NUMPY = "numpy"
TORCH = "torch"


@dataclass(frozen=True)
class Entry:
    """One thing a worker sees: ``bind`` (``path`` read-only at the same path), ``cover`` (``path`` an empty folder
    no worker can write), ``link`` (``path`` a symbolic link to ``target``, as it is on the machine) or ``dir`` (an
    empty folder anyone may search, on the way to another entry: /root is one, whatever its mode here)."""

    kind: str
    path: str
    target: str = ""


def _links(path: str, depth: int = 0) -> list[Entry]:
    """The symbolic links met on the way to ``path``, and those on the way to each one's target."""
    entries: list[Entry] = []
    here = "/"  # always a real path: every link before it resolved
    for part in [p for p in path.split("/") if p and p != "."]:
        if part == "..":
            here = os.path.dirname(here)
            continue
        step = os.path.join(here, part)
        if os.path.islink(step) and depth < 40:
            target = os.readlink(step)
            entries.append(Entry("link", step, target))
            entries += _links(os.path.join(here, target), depth + 1)
            here = os.path.realpath(step)
        else:
            here = step
    return entries


def chain(path: str) -> list[Entry]:
    """``path`` as the worker must find it: every symbolic link on the way reproduced (``/lib`` -> ``usr/lib``), and
    the file or folder it leads to bound."""
    return [*_links(path), Entry("bind", os.path.realpath(path))]


def _ld_conf_folders(path: str = "/etc/ld.so.conf", seen: set | None = None) -> list[str]:
    """The folders ``ld.so.conf`` (and the files it includes) names."""
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    folders = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include "):
            for pattern in line.split()[1:]:
                pattern = pattern if pattern.startswith("/") else os.path.join(os.path.dirname(path), pattern)
                for included in sorted(glob.glob(pattern)):
                    folders += _ld_conf_folders(included, seen)
        elif line.startswith("/"):
            folders.append(line)
    return folders


def library_folders() -> list[str]:
    """The folders the dynamic loader finds the system's shared libraries in, those that exist: the multiarch ones,
    /lib64 and /usr/lib64, ld.so.conf's, and (where a GPU is present, for CUDA) LD_LIBRARY_PATH's."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    found = [f"/lib/{multiarch}", f"/usr/lib/{multiarch}"] if multiarch else []
    found += ["/lib64", "/usr/lib64", *_ld_conf_folders()]
    if glob.glob("/dev/nvidia*"):
        found += [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p.startswith("/")]
    return [f for f in dict.fromkeys(found) if os.path.isdir(f)]


def _python_inside(folder: str) -> list[str]:
    """The Python installations a library folder holds (``python3.11``, ``python3``): covered."""
    try:
        return sorted(entry.path for entry in os.scandir(folder)
                      if entry.name.startswith("python") and entry.is_dir(follow_symlinks=False))
    except OSError:
        return []


def system() -> list[Entry]:
    """The system's part: the library folders (the dynamic loader among them: /lib64's; any Python in them covered),
    the loader's cache, and the placeholder's programs."""
    entries = []
    for folder in library_folders():
        entries += chain(folder)
        entries += [Entry("cover", inner) for inner in _python_inside(os.path.realpath(folder))]
    if os.path.isfile("/etc/ld.so.cache"):
        entries.append(Entry("bind", "/etc/ld.so.cache"))
    for program in PROGRAMS:
        found = program if program.startswith("/") else shutil.which(program, path=PROGRAMS_PATH)
        if found and os.path.exists(found):
            entries += chain(found)
    return entries


def interpreter() -> list[Entry]:
    """The interpreter's part: its executable, libpython, the standard library (its site-packages covered),
    lib-dynload and the environment's pyvenv.cfg."""
    entries = chain(sys.executable)
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        shared = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
        if os.path.isfile(shared):
            entries += chain(shared)
    # The standard library is where os.py is (a venv's own lib/pythonX.Y holds only its site-packages).
    libraries = [os.path.dirname(os.__file__), sysconfig.get_config_var("DESTSHARED"),
                 *(p for p in sys.path if p.endswith(".zip"))]
    for folder in dict.fromkeys(p for p in libraries if p and os.path.exists(p)):
        entries += chain(folder)
        if os.path.isdir(folder):
            entries += [Entry("cover", os.path.join(os.path.realpath(folder), name)) for name in PACKAGE_FOLDERS
                        if os.path.isdir(os.path.join(folder, name))]
    config = os.path.join(sys.prefix, "pyvenv.cfg")
    if os.path.isfile(config):
        entries += chain(config)
    return entries


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~(\[]", requirement.strip(), maxsplit=1)[0]


def _recorded(dist: importlib.metadata.Distribution) -> list[str]:
    """The paths a distribution's record lists, relative to its site-packages folder, with forward slashes. RECORD's
    first column read as text: torch's lists about 15,000 files, which ``Distribution.files`` makes a path object
    of each (a third of a second). A distribution without a RECORD (an egg's installed-files.txt) through
    ``files``."""
    record = dist.read_text("RECORD")
    if record is None:
        return [str(file).replace(os.sep, "/") for file in dist.files or ()]
    return [row[0].replace(os.sep, "/") for row in csv.reader(record.splitlines()) if row]


def _top_level(name: str) -> list[str]:
    """The paths an installed distribution's files occupy at the top of its site-packages folder: its packages'
    folders, its single-file modules, their compiled files, its ``.libs`` and ``.dist-info`` folders. From its
    record of files; where there is none, the folder its import name is found in."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    tops: list[str] = []
    files = _recorded(dist) if dist is not None else []
    if files:
        base = str(dist.locate_file(""))
        for file in files:
            parts = file.split("/")
            if not parts[0] or parts[0] == ".." or os.path.isabs(file):
                continue
            top = os.path.join(base, *parts[:2]) if parts[0] == "__pycache__" and len(parts) > 1 else \
                os.path.join(base, parts[0])
            tops.append(top)
    else:
        try:
            spec = importlib.util.find_spec(name.replace("-", "_"))
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            folder = list(spec.submodule_search_locations)[0]
            tops += [folder, folder + ".libs"]
        elif spec is not None and spec.origin:
            tops.append(spec.origin)
    return [t for t in dict.fromkeys(tops) if os.path.exists(t)]


def _applies(requirement: str) -> bool:
    """Whether a requirement holds here: its marker (platform, Python version) true, no extra asked."""
    if ";" not in requirement:
        return True
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # no packaging: every requirement but an extra's
        return "extra" not in requirement.split(";", 1)[1]
    try:
        marker = Requirement(requirement).marker
    except InvalidRequirement:
        return False
    return marker is None or marker.evaluate({"extra": ""})


def _requires(name: str) -> list[str]:
    """The distributions ``name`` requires here (its extras' left out), by name."""
    try:
        requirements = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [_name(r) for r in requirements if _applies(r)]


def distributions(torch_too: bool) -> list[str]:
    """The distributions a worker sees: numpy, and with ``torch_too`` torch and everything it requires."""
    names = [NUMPY]
    if torch_too:
        todo = [TORCH]
        while todo:
            name = todo.pop()
            key = name.lower().replace("_", "-").replace(".", "-")
            if key in (n.lower() for n in names):
                continue
            try:
                importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                if name != TORCH:
                    continue
            names.append(name)
            todo += _requires(name)
    return names


def packages(torch_too: bool) -> list[Entry]:
    """The installed packages' part: the files of ``distributions(torch_too)``, each at its own path."""
    return [entry for name in distributions(torch_too) for top in _top_level(name) for entry in chain(top)]


@functools.cache
def worker(torch_too: bool) -> tuple[Entry, ...]:
    """Everything of the machine a worker sees, in order (a later entry may lie inside an earlier cover), each path
    once."""
    ordered: list[Entry] = []
    for entry in [*system(), *interpreter(), *packages(torch_too)]:
        if entry in ordered:
            continue
        # Inside a folder bound already, a link or a file is there as the machine has it (and bubblewrap could not
        # make it over a read-only folder); inside a cover, it is bound back.
        around = [e for e in ordered if e.kind in ("bind", "cover") and entry.path.startswith(e.path + os.sep)]
        if entry.kind != "cover" and around and max(around, key=lambda e: len(e.path)).kind == "bind":
            continue
        for folder in reversed([str(p) for p in Path(entry.path).parents][:-1]):
            if not any(e.path == folder or (e.kind in ("bind", "cover") and folder.startswith(e.path + os.sep))
                       for e in ordered):
                ordered.append(Entry("dir", folder))
        ordered.append(entry)
    return tuple(ordered)
