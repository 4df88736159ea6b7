"""``autograd-lab doctor``: what isolation and devices this machine gives the graders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from graders.judge import bubblewrap, budget, forkserver, sandbox
from graders.judge.grade import versions


def _bwrap_version() -> str:
    try:
        return subprocess.run([bubblewrap.BWRAP, "--version"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except OSError:
        return ""


def report(kernel: str) -> str:
    """Every line of ``autograd-lab doctor``: versions, the uid, bubblewrap, the isolation and budgets a worker gets
    here, and what it can reach, so an instructor sees what a grade on this machine is protected by before grading a
    class. ``kernel``: how nbgrader's notebook kernel runs here (``graders.integrations.kernel_jail.describe()``),
    handed down by the command, since the integrations sit above the judge."""
    import torch

    isolation = sandbox.choose("auto")
    bwrap = shutil.which(bubblewrap.BWRAP)
    lines = [
        " · ".join(f"{k} {v}" for k, v in versions().items()),
        f"interpreter:  {sys.executable}",
        f"running as:   uid {os.geteuid()}" + (" (root: each worker runs as an unprivileged uid of its own)"
                                                 if isolation.drop else ""),
        f"bubblewrap:   {_bwrap_version() + ' at ' + bwrap if bwrap else 'not installed'}"
        + ("" if not bwrap or sandbox.bubblewrap_works() else " (installed, but cannot make a sandbox here)"),
        f"isolation:    {isolation.describe()}",
        f"workers:      {forkserver.describe(isolation)}",
        f"budgets:      {budget.describe()}",
        f"nbgrader:     the notebook's kernel runs {kernel}",
        f"CUDA:         {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none (task 6.2 is skipped)'}",
    ]
    lines.append(f"the worker:   {_worker_text(isolation)}")
    if isolation.bubblewrap:
        fallback = sandbox.choose("limits")
        lines += [f"--isolation limits: {fallback.describe()}", f"  the worker:   {_worker_text(fallback)}"]
    else:
        lines.append("hint: install bubblewrap (apt-get install bubblewrap) for no network, a private pid "
                     "namespace and a filesystem that shows the worker only the submission and the interpreter")
    return "\n".join(lines)


def _worker_text(isolation: sandbox.Isolation) -> str:
    """What student code can and cannot do on this machine, in one line."""
    if isolation.bubblewrap:
        return ("sees only the interpreter (read-only, without torch outside task 6) and the package it is "
                "graded on; no network; cannot see or signal the judge; its /tmp and working folder are "
                "private and size-capped")
    if isolation.drop and isolation.reads_all:
        return (f"can READ every file on this machine, other students' submissions and any checkout's solutions/ "
                f"included (the uid keeps CAP_DAC_READ_SEARCH: {sys.executable} is not reachable by other uids, "
                "and this machine allows no mount namespace to hide anything), but write only its working folder "
                "and /tmp (swept after it); cannot signal the judge or read its memory")
    if isolation.drop and sandbox.namespaces_work():
        return ("reads what any user can read, less what a mount namespace of its own hides: other grades, the "
                "folder of the submissions, the checkout's solutions/, the graders and (outside task 6) torch; no "
                "network; writes only its working folder and /tmp (swept after it); cannot signal the judge; its "
                "command line names no folder")
    if isolation.drop:
        return ("can read what any user can read (other students' submissions too, where their folders let "
                "anyone read, and torch, kept from the numpy tasks by an import refusal alone: this machine allows "
                "no mount namespace), write only its working folder and /tmp (swept after it); cannot signal the "
                "judge")
    return ("runs as the judge's own uid: it can read and write whatever the judge can (other students' "
            "submissions, any checkout's solutions/ and the results directory included); use bubblewrap, or run "
            "the judge as root to drop the worker")
