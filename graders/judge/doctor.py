"""``autograd-lab doctor``: what isolation and devices this machine gives the graders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from graders import messages as msg
from graders.isolation import bubblewrap, budget, fork_servers, sandbox
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

    isolation = sandbox.choose("auto", practice=True)
    bwrap = shutil.which(bubblewrap.BWRAP)
    found = msg.DOCTOR_BUBBLEWRAP_AT.format(version=_bwrap_version(), path=bwrap) if bwrap else \
        msg.DOCTOR_BUBBLEWRAP_MISSING
    lines = [
        " · ".join(f"{k} {v}" for k, v in versions().items()),
        msg.DOCTOR_INTERPRETER.format(path=sys.executable),
        msg.DOCTOR_UID.format(uid=os.geteuid(), root=msg.DOCTOR_UID_ROOT if isolation.drop else ""),
        msg.DOCTOR_BUBBLEWRAP.format(found=found, broken="" if not bwrap or sandbox.bubblewrap_works() else
                                     msg.DOCTOR_BUBBLEWRAP_BROKEN),
        msg.DOCTOR_ISOLATION.format(isolation=isolation.describe()),
        msg.DOCTOR_COUNTED.format(text=_counted()),
        msg.DOCTOR_WORKERS.format(workers=fork_servers.describe(isolation)),
        msg.DOCTOR_BUDGETS.format(budgets=budget.describe()),
        msg.DOCTOR_KERNEL.format(kernel=kernel),
        msg.DOCTOR_CUDA.format(device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else
                               msg.DOCTOR_NO_CUDA),
    ]
    lines.append(msg.DOCTOR_WORKER.format(text=_worker_text(isolation)))
    if isolation.bubblewrap:
        fallback = sandbox.choose("limits", practice=True)
        lines += [msg.DOCTOR_FALLBACK.format(isolation=fallback.describe()),
                  msg.DOCTOR_FALLBACK_WORKER.format(text=_worker_text(fallback))]
    else:
        lines.append(msg.DOCTOR_HINT_BUBBLEWRAP)
    return "\n".join(lines)


def _counted() -> str:
    """What a grade that counts (grade-all, Gradescope, nbgrader, the workflows) does here: runs in bubblewrap, or
    refuses, and why, with the fix and what --isolation limits would do."""
    if sandbox.bubblewrap_works():
        return msg.DOCTOR_COUNTED_BUBBLEWRAP
    limits = sandbox.limits_problem()
    return msg.DOCTOR_COUNTED_REFUSED.format(why=sandbox.bubblewrap_problem(), fix=sandbox.bubblewrap_fix(),
                                             limits=msg.DOCTOR_COUNTED_LIMITS_OK if limits is None else limits)


def _worker_text(isolation: sandbox.Isolation) -> str:
    """What student code can and cannot do on this machine, in one line."""
    if isolation.bubblewrap:
        return msg.DOCTOR_WORKER_CAN["bubblewrap"]
    if isolation.drop and isolation.reads_all:
        return msg.DOCTOR_WORKER_CAN["reads_all"].format(interpreter=sys.executable)
    if isolation.drop and sandbox.namespaces_work():
        return msg.DOCTOR_WORKER_CAN["namespace"]
    if isolation.drop:
        return msg.DOCTOR_WORKER_CAN["uid"]
    return msg.DOCTOR_WORKER_CAN["judge_uid"]
