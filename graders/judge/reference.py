"""Expected values, computed by the judge: torch.autograd in float64 (CPU, and CUDA
where present) and float64 central differences as a second, independent witness.

torch is imported by each function, not at the top: a warm grade reads the expected values it needs from the
kept draws (graders.judge.examples_cache), while torch's import goes on beside it (graders.judge.grade)."""

from __future__ import annotations

import functools
import glob
import warnings

import numpy as np

from graders import messages as msg


@functools.cache
def cuda_available() -> bool:
    """Whether torch can use a CUDA device here: the second witness of every expected gradient, and task 6.2. Cached,
    and answered without importing torch on a machine with no GPU."""
    if not glob.glob("/dev/nvidia*"):  # no GPU: no need to import torch to ask
        return False
    import torch

    return torch.cuda.is_available()


def _torch_args(operands, device):
    import torch

    tensors, args = [], []
    for value in operands:
        if isinstance(value, np.ndarray):
            tensors.append(torch.tensor(value, dtype=torch.float64, device=device, requires_grad=True))
            args.append(tensors[-1])
        else:
            args.append(value)
    return tensors, args


# torch's autograd runs a CUDA backward on a thread of its own; its first cuBLAS call there finds no current
# context, warns, and sets the primary context itself (seen on an H200 with torch 2.11). Harmless, and a warning
# turned into an error (pytest's filterwarnings) must not fail the grader's witness.
NO_CUDA_CONTEXT_WARNING = "Attempting to run cuBLAS, but there was no current CUDA context"


def vjp(fn, operands, kwargs, upstream: np.ndarray | None = None, device: str = "cpu"):
    """(output, gradient for each array operand) of ``fn`` at ``operands`` against ``upstream``."""
    import torch

    tensors, args = _torch_args(operands, device)
    out = fn(*args, **kwargs)
    if upstream is None:
        return out.detach().cpu().numpy(), None
    g = torch.tensor(upstream, dtype=torch.float64, device=device)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NO_CUDA_CONTEXT_WARNING, category=UserWarning)
        # <out, g> differentiated is exactly the vector-Jacobian product with g; passed as grad_outputs instead,
        # g makes autograd import sympy (a quarter of a second) to compare their shapes
        assert out.shape == g.shape, (out.shape, g.shape)
        grads = torch.autograd.grad((out * g).sum(), tensors, allow_unused=True)
    return out.detach().cpu().numpy(), [
        np.zeros(t.shape) if d is None else d.detach().cpu().numpy() for t, d in zip(tensors, grads)]


def finite_differences(fn, operands, kwargs, upstream: np.ndarray, step: float = 1e-6) -> list[np.ndarray]:
    """Central differences of <upstream, fn(operands)> for each array operand, in float64."""
    import torch

    def objective(values):
        with torch.no_grad():
            out = fn(*[torch.tensor(v) if isinstance(v, np.ndarray) else v for v in values], **kwargs)
        return float(np.sum(out.numpy() * upstream))

    grads = []
    for i, value in enumerate(operands):
        if not isinstance(value, np.ndarray):
            continue
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            shifted = [v.copy() if isinstance(v, np.ndarray) else v for v in operands]
            shifted[i][index] += step
            up = objective(shifted)
            shifted[i][index] -= 2 * step
            grad[index] = (up - objective(shifted)) / (2 * step)
        grads.append(grad)
    return grads


class WitnessesDisagree(AssertionError):
    """The grader's own witnesses disagree: a grader bug, never the student's."""


def expected_vjp(fn, operands, kwargs, upstream, *, with_finite_differences: bool = False):
    """The CPU result, confirmed on CUDA where present and by finite differences when asked."""
    out, grads = vjp(fn, operands, kwargs, upstream)
    witnesses = []
    if cuda_available():
        _, on_cuda = vjp(fn, operands, kwargs, upstream, device="cuda")
        witnesses.append(("CUDA", on_cuda, 1e-9))
    if with_finite_differences:
        witnesses.append(("finite differences", finite_differences(fn, operands, kwargs, upstream), 1e-5))
    for name, other, rtol in witnesses:
        for mine, theirs in zip(grads, other):
            if not np.allclose(mine, theirs, rtol=rtol, atol=rtol):
                raise WitnessesDisagree(f"torch on the CPU and {name} disagree: {mine} vs {theirs}")
    return out, grads


def source_text(with_finite_differences: bool = False) -> str:
    """Where an expected gradient came from, for a failure message: torch's autograd in float64, on the CPU (and CUDA
    where it agreed), and finite differences when they were asked."""
    parts = [msg.SOURCE_TORCH, msg.SOURCE_CPU_CUDA if cuda_available() else msg.SOURCE_CPU]
    if with_finite_differences:
        parts.append(msg.SOURCE_FINITE_DIFFERENCES)
    return "; ".join(parts)
