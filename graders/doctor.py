"""``autograd-lab doctor``: what isolation and devices this machine gives the graders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from . import sandbox
from .grade import versions


def _bwrap_version() -> str:
    try:
        return subprocess.run([sandbox.BWRAP, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return ""


def report() -> str:
    import torch

    isolation = sandbox.choose("auto")
    bwrap = shutil.which(sandbox.BWRAP)
    lines = [
        " · ".join(f"{k} {v}" for k, v in versions().items()),
        f"interpreter:  {sys.executable}",
        f"running as:   uid {os.geteuid()}" + (" (root: the worker is dropped to an unprivileged uid)"
                                                 if isolation.uid is not None else ""),
        f"bubblewrap:   {_bwrap_version() + ' at ' + bwrap if bwrap else 'not installed'}"
        + ("" if not bwrap or sandbox.bubblewrap_works() else " (installed, but cannot make a sandbox here)"),
        f"isolation:    {isolation.describe()}",
        f"CUDA:         {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none (task 6.2 is skipped)'}",
    ]
    if not isolation.bubblewrap:
        lines.append("hint: install bubblewrap (apt-get install bubblewrap) for no network, a private pid "
                     "namespace and a filesystem that shows the worker only the submission and the interpreter")
    return "\n".join(lines)
