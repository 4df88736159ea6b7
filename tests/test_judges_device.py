"""The judge's device (graders/worker/device.py), on which task 6.1 runs fit_torch on a machine without a GPU: does
a tensor left on the CPU fail there as on a GPU, does every honest way of moving reach it, and are its numbers the
CPU's? And the worker's memory as the judge reads it from the kernel (graders/isolation/processes.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from graders import messages as msg
from graders.isolation import processes
from graders.judge.checks import torch_loop
from graders.worker import device, verbs_torch

DEVICE = torch.device(device.NAME)


def net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(1, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1)).double()


X = torch.linspace(-1.0, 1.0, 8, dtype=torch.float64).reshape(-1, 1)


def test_the_judge_and_the_worker_name_the_same_device_and_shifts():
    """The judge and the worker share no code: do they name the same device, the same probe shifts, and the same
    words for the error of two devices (which the judge reads to name what was left behind)?"""
    assert torch_loop.JUDGES_DEVICE == device.NAME
    assert device.MIXED.startswith(msg.TORCH_TWO_DEVICES)
    assert (torch_loop.TRAINING_SHIFT, torch_loop.GRAD_SHIFT, torch_loop.DEVICE_SHIFT) == \
        (verbs_torch.TRAINING_SHIFT, verbs_torch.GRAD_SHIFT, verbs_torch.DEVICE_SHIFT)


@pytest.mark.parametrize("move", [
    lambda t: t.to(DEVICE), lambda t: t.to(device.NAME), lambda t: t.to(device=DEVICE),
    lambda t: t.to(DEVICE, non_blocking=True), lambda t: t.to(DEVICE, torch.float64),
    lambda t: t.to(torch.zeros((), dtype=torch.float64).to(DEVICE)),
], ids=["to(device)", "to('meta')", "to(device=)", "non_blocking", "with a dtype", "to(a tensor there)"])
def test_every_spelling_of_a_move_lands_on_the_device_with_the_cpus_values(move):
    """Does each way of moving a batch put it on the judge's device, holding exactly its values?"""
    with device.simulated():
        moved = move(X)
        assert moved.device == DEVICE and device.is_on(moved)
        back = moved.cpu()
    assert back.device.type == "cpu" and torch.equal(back, X)


def test_a_tensor_left_on_the_cpu_fails_as_on_a_gpu_and_a_0d_one_does_not():
    """Does an op that meets a device tensor and a CPU batch raise torch's error for two devices, while a CPU scalar
    (0-d), a Python number and a copy_ from the CPU (a move) are allowed, as on CUDA?"""
    with device.simulated():
        model = net().to(DEVICE)
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            model(X)
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            net()(X.to(DEVICE))
        out = model(X.to(DEVICE))
        assert device.is_on(out * torch.tensor(2.0, dtype=torch.float64) + 1.0)
        buffer = torch.zeros(8, 1, dtype=torch.float64, device=DEVICE)
        buffer.copy_(X)
        assert torch.equal(buffer.cpu(), X)


def test_a_run_on_the_device_computes_the_cpus_numbers_and_keeps_the_parameter_objects():
    """A model moved with model.to(device) and trained there by an optimizer built before the move: are its
    Parameters the same objects (as a move to CUDA keeps them), and its weights, losses and .item() the CPU run's to
    the last bit, read back by every honest spelling?"""
    def run(where):
        model = net()
        params = list(model.parameters())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model = model.to(where)
        assert all(a is b for a, b in zip(params, model.parameters()))
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = ((model(X.to(where)) - torch.sin(X).to(where)) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append((loss.item(), float(loss.detach()), loss.detach().cpu().item()))
        return losses, [p.detach().cpu().numpy() for p in model.parameters()]

    with device.simulated():
        on_device = run(DEVICE)
    on_cpu = run(torch.device("cpu"))
    assert on_device[0] == on_cpu[0]
    for a, b in zip(on_device[1], on_cpu[1]):
        np.testing.assert_array_equal(a, b)


def test_tensors_made_on_the_device_are_there():
    """Do tensors made with device= (zeros, full, tensor, as_tensor) land on the judge's device, holding their
    values?"""
    with device.simulated():
        made = [torch.zeros(3, device=DEVICE), torch.full((2,), 3.0, device=DEVICE),
                torch.tensor(1.5, device=DEVICE), torch.as_tensor([1.0, 2.0], device=device.NAME)]
        assert all(device.is_on(t) for t in made)
        assert made[2].item() == 1.5 and made[3].cpu().tolist() == [1.0, 2.0]


def test_a_loss_on_the_device_reads_as_a_cuda_tensor_would():
    """Do the ways of reading a value that work on a CUDA tensor work on the judge's device (.item(), float(),
    f"{loss:.4f}", .tolist(), .cpu().numpy()), and .numpy() refuse as on CUDA?"""
    with device.simulated():
        values = X.to(DEVICE)
        loss = values.sum()
        assert (loss.item(), float(loss), f"{loss:.2f}") == (0.0, 0.0, "0.00")
        assert values[:2, 0].tolist() == [-1.0, -1.0 + 2 / 7]
        assert loss.detach().cpu().numpy() == 0.0
        with pytest.raises(TypeError, match="Use Tensor.cpu"):
            loss.numpy()


def test_leaving_the_device_restores_torchs_own_setting():
    """Is torch's module-conversion setting what it was before, once the run on the device is over?"""
    before = torch.__future__.get_swap_module_params_on_conversion()
    with device.simulated():
        pass
    assert torch.__future__.get_swap_module_params_on_conversion() == before


# ----- the worker's memory, from the kernel -----

HOLD = """
import sys
import numpy as np
print("ready", flush=True)
sys.stdin.readline()
block = np.ones(64 * 2**20 // 8)  # 64 MiB, every page written
del block
print("done", flush=True)
sys.stdin.readline()
"""


def test_the_peak_memory_of_a_process_is_read_from_outside_after_a_reset():
    """Does the judge read, from /proc, how far a process's resident memory peaked over a stretch of its work (64
    MiB held, then freed), after resetting the peak it kept from before?"""
    with subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as child:
        try:
            assert child.stdout.readline() == "ready\n"
            before = processes.reset_peak_memory(child.pid)
            assert before is not None and before > 0
            child.stdin.write("go\n")
            child.stdin.flush()
            assert child.stdout.readline() == "done\n"
            grown = processes.peak_memory_growth(child.pid, before)
            assert 60 * 2**20 < grown < 80 * 2**20, grown
            assert processes.peak_memory_growth(child.pid, processes.reset_peak_memory(child.pid)) < 8 * 2**20
        finally:
            child.kill()


def test_a_process_whose_peak_cannot_be_read_gives_no_reading():
    """For a process that has ended, is there no reading (rather than a number)?"""
    with subprocess.Popen([sys.executable, "-c", "pass"]) as child:
        child.wait()
    assert processes.reset_peak_memory(child.pid) is None
    assert processes.peak_memory_growth(child.pid, None) is None
    assert processes.peak_memory_growth(os.getpid(), None) is None
