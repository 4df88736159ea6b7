"""The visible part of each graded cell of the nbgrader notebook: a short check a student can read.

A task's cell is its function's body (cell_source.body_of), run inside ``with visible_check("1.4") as lab:``:
``lab`` is the student's .py files imported afresh, and ``visible_check``, ``expect`` and ``SkipCheck`` come from
the setup cell (setup.py), so each check prints one line and never raises. A check uses numpy, the student's
files and, for task 6, torch: never ``graders``, which students' kernels do not have. Task 1 calls each backward
rule by hand (``out._backward(g)``) and task 2 builds graphs with ``op`` and rules written here, as the public
tests do, so each check needs only its own task. The grader checks far more; these only show a student that a
task works at all.
"""

import numpy as np

from graders.course.cells.setup import SkipCheck, expect


def task_1_1(lab):
    g = np.ones((4, 2, 3))
    expect("unbroadcast(ones (4, 2, 3), (2, 1))", lab.unbroadcast(g, (2, 1)), np.full((2, 1), 12.0))
    expect("unbroadcast(ones (4, 2, 3), (3,))", lab.unbroadcast(g, (3,)), np.full(3, 8.0))


def task_1_2(lab):
    x = lab.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = lab.Tensor([10.0, 20.0, 30.0], requires_grad=True)
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    dx, db = (x + b)._backward(g)
    expect("x + b: dL/dx", dx, g)
    expect("x + b: dL/db (b was broadcast over the rows)", db, [5.0, 7.0, 9.0])
    expect("x - b: dL/db", (x - b)._backward(g)[1], [-5.0, -7.0, -9.0])
    expect("-x: dL/dx", (-x)._backward(g)[0], -g)


def task_1_3(lab):
    x = lab.Tensor([1.0, 2.0, 4.0], requires_grad=True)
    y = lab.Tensor([2.0, 4.0, 8.0], requires_grad=True)
    g = np.array([1.0, 2.0, 3.0])
    dx, dy = (x * y)._backward(g)
    expect("x * y: dL/dx", dx, [2.0, 8.0, 24.0])
    expect("x * y: dL/dy", dy, [1.0, 4.0, 12.0])
    dx, dy = (x / y)._backward(g)
    expect("x / y: dL/dx", dx, [0.5, 0.5, 0.375])
    expect("x / y: dL/dy", dy, [-0.25, -0.25, -0.1875])


def task_1_4(lab):
    x = lab.Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = lab.Tensor([[0.5], [-1.0]], requires_grad=True)
    dx, dw = (x @ w)._backward(np.array([[1.0], [2.0]]))
    expect("x @ w: dL/dx", dx, [[0.5, -1.0], [1.0, -2.0]])
    expect("x @ w: dL/dw", dw, [[7.0], [10.0]])


def task_1_5(lab):
    x = lab.Tensor([1.0, 2.0, 4.0], requires_grad=True)
    g = np.array([1.0, 2.0, 3.0])
    expect("x ** 3: dL/dx", (x ** 3)._backward(g)[0], [3.0, 24.0, 144.0])
    expect("x.exp(): dL/dx", x.exp()._backward(g)[0], g * np.exp([1.0, 2.0, 4.0]))
    expect("x.log(): dL/dx", x.log()._backward(g)[0], [1.0, 1.0, 0.75])


def task_1_6(lab):
    x = lab.Tensor([-1.0, 0.0, 2.0], requires_grad=True)
    g = np.ones(3)
    s = 1 / (1 + np.exp(-x.data))
    expect("x.relu(): dL/dx (0 at exactly 0)", x.relu()._backward(g)[0], [0.0, 0.0, 1.0])
    expect("x.tanh(): dL/dx", x.tanh()._backward(g)[0], 1 - np.tanh(x.data) ** 2)
    expect("x.sigmoid(): dL/dx", x.sigmoid()._backward(g)[0], s * (1 - s))


def task_1_7(lab):
    x = lab.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    expect("x.sum(axis=0): dL/dx", x.sum(axis=0)._backward(np.array([1.0, 2.0, 3.0]))[0],
           [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    expect("x.mean(axis=1): dL/dx", x.mean(axis=1)._backward(np.array([3.0, 6.0]))[0],
           [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    expect("x.square_mean(): dL/dx", x.square_mean()._backward(np.array(1.0))[0], x.data / 3)


def task_1_8(lab):
    x = lab.Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    g = np.arange(6.0).reshape(3, 2)
    expect("x.reshape(3, 2): dL/dx", x.reshape(3, 2)._backward(g)[0], np.arange(6.0).reshape(2, 3))
    expect("x.T: dL/dx", x.T._backward(g)[0], g.T)


def task_2_1(lab):
    # y = x**2 + x uses x twice; the rules are written here, so only your engine is checked
    x = lab.Tensor(3.0, requires_grad=True)
    square = lab.op(x.data ** 2, (x,), lambda g: (2 * x.data * g,))
    y = lab.op(square.data + x.data, (square, x), lambda g: (g, g))
    y.backward()
    expect("x.grad for y = x**2 + x at x = 3", x.grad, 7.0)


def task_2_2(lab):
    x = lab.Tensor([1.0, 2.0], requires_grad=True)
    c = lab.Tensor([5.0, 5.0])  # a constant: requires_grad=False
    total = lab.op(np.sum(x.data * c.data), (x, c), lambda g: (g * c.data, g * x.data))
    total.backward()
    total.backward()
    expect("x.grad after two backward() calls (they add up)", x.grad, [10.0, 10.0])
    assert c.grad is None, f"c.grad is {c.grad!r}, expected None: c does not require grad"
    doubled = lab.op(2 * x.data, (x,), lambda g: (2 * g,))
    try:
        doubled.backward()
    except RuntimeError:
        pass
    else:
        raise AssertionError("backward() without grad= on a 2-element tensor did not raise RuntimeError")


def task_2_3(lab):
    x = lab.Tensor([1.0], requires_grad=True)
    with lab.no_grad():
        y = lab.op(2 * x.data, (x,), lambda g: (2 * g,))
    assert not y.requires_grad and not y._parents, "an op inside no_grad() recorded a graph"
    assert lab.is_grad_enabled(), "grad mode is still off after the no_grad() block"
    try:
        with lab.no_grad():
            raise KeyError("leaving the block with an exception")
    except KeyError:
        pass
    assert lab.is_grad_enabled(), "grad mode is still off after an exception left the no_grad() block"


def task_2_4(lab):
    x = lab.Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = lab.op(y.data + 1.0, (y,), lambda g: (g,))
    y.backward()
    expect("x.grad after a chain of 10,000 ops", x.grad, 1.0)


def task_3_1(lab):
    p = lab.Tensor([1.0, 2.0], requires_grad=True)
    q = lab.Tensor([5.0], requires_grad=True)
    optimizer = lab.SGD([p, q], lr=0.1)
    p.grad = np.array([10.0, -10.0])  # q.grad stays None: step() must skip q
    optimizer.step()
    expect("p after one step", p.data, [0.0, 3.0])
    expect("q (grad None) after one step", q.data, [5.0])
    optimizer.zero_grad()
    assert p.grad is None, f"p.grad is {p.grad!r} after zero_grad(), expected None"


def task_3_2(lab):
    p = lab.Tensor([1.0], requires_grad=True)
    optimizer = lab.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5)
    for _ in range(2):
        p.grad = np.array([2.0])
        optimizer.step()
    expect("p after two steps (torch.optim.SGD gives 0.2875)", p.data, [0.2875])
    copy = lab.Tensor(p.data.copy(), requires_grad=True)
    resumed = lab.SGD([copy], lr=0.1, momentum=0.9, weight_decay=0.5)
    resumed.load_state_dict(optimizer.state_dict())
    p.grad, copy.grad = np.array([2.0]), np.array([2.0])
    optimizer.step()
    resumed.step()
    expect("a copy after loading the state dict and one more step", copy.data, p.data)


def task_3_3(lab):
    p = lab.Tensor([1.0], requires_grad=True)
    optimizer = lab.Adam([p], lr=0.1)
    p.grad = np.array([2.0])
    optimizer.step()
    expect("p after one step (torch.optim.Adam gives 0.9000000005)", p.data, [0.9000000005])
    p.grad = np.array([-1.0])
    optimizer.step()
    expect("p after a second step (torch gives 0.8733662967)", p.data, [0.8733662967024315])


def task_4_1(lab):
    X = np.arange(10.0).reshape(10, 1)
    loader = lab.DataLoader(X, -X, batch_size=4, shuffle=False)
    sizes = [len(xb.data) for xb, yb in loader]
    assert sizes == [4, 4, 2], f"10 examples in batches of 4 came as batches of sizes {sizes}, expected [4, 4, 2]"
    assert len(loader) == 3, f"len(loader) is {len(loader)}, expected 3"
    xb, yb = next(iter(loader))
    expect("the first xb", xb.data, X[:4])
    expect("the first yb", yb.data, -X[:4])
    dropped = lab.DataLoader(X, -X, batch_size=4, shuffle=False, drop_last=True)
    sizes = [len(xb.data) for xb, yb in dropped]
    assert sizes == [4, 4], f"with drop_last=True the batch sizes are {sizes}, expected [4, 4]"


def task_4_2(lab):
    X = np.arange(20.0).reshape(20, 1)
    loader = lab.DataLoader(X, X, batch_size=8, rng=np.random.default_rng(7))
    twin = lab.DataLoader(X, X, batch_size=8, rng=np.random.default_rng(7))
    first = [int(v) for xb, yb in loader for v in xb.data[:, 0]]
    second = [int(v) for xb, yb in loader for v in xb.data[:, 0]]
    assert sorted(first) == list(range(20)), f"an epoch visited {first}, expected each of 0..19 once"
    assert first != list(range(20)), "with shuffle=True the first epoch came in the data's order"
    assert first != second, "two epochs came in the same order: draw a fresh permutation every epoch"
    twins = [int(v) for xb, yb in twin for v in xb.data[:, 0]]
    assert twins == first, "two loaders given default_rng(7) came in different orders"


def task_5_1(lab):
    X, Y = lab.make_sine_data(n=64)
    rng = np.random.default_rng(0)
    model = lab.Sequential(lab.Linear(1, 16, rng=rng), lab.ReLU(), lab.Linear(16, 1, rng=rng))
    loader = lab.DataLoader(X, Y, batch_size=16, shuffle=False)
    optimizer = lab.SGD(model.parameters(), lr=0.05)
    losses = [lab.train_epoch(model, loader, optimizer, lab.MSELoss()) for _ in range(20)]
    assert type(losses[0]) is float, f"train_epoch returned a {type(losses[0]).__name__}, expected a float"
    assert losses[-1] < losses[0], f"20 epochs took the loss from {losses[0]:.4f} to {losses[-1]:.4f}"


def task_5_2(lab):
    X, Y = lab.make_sine_data(n=64)
    model = lab.Linear(1, 1, rng=np.random.default_rng(0))
    model.train()
    loss = lab.evaluate(model, lab.DataLoader(X, Y, batch_size=16, shuffle=False), lab.MSELoss())
    expected = np.mean((X @ model.weight.data + model.bias.data - Y) ** 2)
    expect("evaluate's loss (four batches of 16)", loss, expected)
    assert model.training, "evaluate left the model in eval mode: restore the mode it came in"
    assert lab.is_grad_enabled(), "grad mode is still off after evaluate"


def task_5_3(lab):
    p = lab.Tensor([0.0, 0.0], requires_grad=True)
    q = lab.Tensor([0.0], requires_grad=True)
    p.grad, q.grad = np.array([3.0, 0.0]), np.array([4.0])
    expect("clip_grad_norm([p, q], max_norm=1.0)", lab.clip_grad_norm([p, q], max_norm=1.0), 5.0)
    expect("p.grad after clipping", p.grad, [0.6, 0.0], tol=1e-6)

    class CountingSGD(lab.SGD):
        steps = 0

        def step(self):
            self.steps += 1
            super().step()

    X, Y = lab.make_sine_data(n=80)
    model = lab.Linear(1, 1, rng=np.random.default_rng(0))
    optimizer = CountingSGD(model.parameters(), lr=0.01)
    loader = lab.DataLoader(X, Y, batch_size=16, shuffle=False)
    lab.train_epoch(model, loader, optimizer, lab.MSELoss(), accumulate=2)
    assert optimizer.steps == 3, f"5 batches with accumulate=2 gave {optimizer.steps} steps, expected 3"


def task_5_4(lab):
    X, Y = lab.make_sine_data(n=64)
    rng = np.random.default_rng(0)
    model = lab.Sequential(lab.Linear(1, 16, rng=rng), lab.ReLU(), lab.Linear(16, 1, rng=rng))
    loader = lab.DataLoader(X, Y, batch_size=16, shuffle=False)
    history = lab.fit(model, loader, lab.SGD(model.parameters(), lr=0.05), lab.MSELoss(), 20,
                      val_loader=lab.DataLoader(X[:32], Y[:32], batch_size=16, shuffle=False))
    lengths = {key: len(value) for key, value in history.items()}
    assert lengths == {"train_loss": 20, "val_loss": 20}, f"history lengths {lengths}, expected 20 each"
    train = history["train_loss"]
    assert train[-1] < train[0], f"20 epochs took the loss from {train[0]:.4f} to {train[-1]:.4f}"
    # the grader runs the lesson's 300 epochs and wants a training MSE below 0.015


def task_5_5(lab):
    import os
    import tempfile

    X, Y = lab.make_sine_data(n=64)
    loader = lab.DataLoader(X, Y, batch_size=16, shuffle=False)

    def run(seed, epochs, checkpoint=None):
        model = lab.Linear(1, 1, rng=np.random.default_rng(seed))
        optimizer = lab.SGD(model.parameters(), lr=0.05, momentum=0.9)
        history = lab.fit(model, loader, optimizer, lab.MSELoss(), epochs, checkpoint=checkpoint)
        return model, history

    straight, straight_history = run(0, 4)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "run.ckpt")
        run(0, 2, checkpoint=path)
        assert os.path.exists(path), f"no file at {path} after fit(..., checkpoint=path)"
        resumed, history = run(1, 4, checkpoint=path)  # other weights: the checkpoint must replace them
    expect("the history after resuming", history["train_loss"], straight_history["train_loss"])
    expect("the weight after resuming", resumed.weight.data, straight.weight.data)


def task_6_1(lab):
    import torch
    from lab.torch_loop import fit_torch

    torch.manual_seed(0)
    X, Y = (torch.from_numpy(a) for a in lab.make_sine_data(n=64))
    model = torch.nn.Sequential(torch.nn.Linear(1, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).double()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    history = fit_torch(model, loader, optimizer, torch.nn.MSELoss(), 20, val_loader=loader)
    lengths = {key: len(value) for key, value in history.items()}
    assert lengths == {"train_loss": 20, "val_loss": 20}, f"history lengths {lengths}, expected 20 each"
    train = history["train_loss"]
    assert train[-1] < train[0], f"20 epochs took the loss from {train[0]:.4f} to {train[-1]:.4f}"


def task_6_2(lab):
    import torch
    from lab.torch_loop import fit_torch

    if not torch.cuda.is_available():
        raise SkipCheck("no CUDA device here (the grader runs 6.2 where there is one; it carries no points)")
    torch.manual_seed(0)
    X, Y = (torch.from_numpy(a) for a in lab.make_sine_data(n=64))
    model = torch.nn.Sequential(torch.nn.Linear(1, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).double()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    history = fit_torch(model, loader, optimizer, torch.nn.MSELoss(), 20, device="cuda")
    train = history["train_loss"]
    assert train[-1] < train[0], f"20 epochs on CUDA took the loss from {train[0]:.4f} to {train[-1]:.4f}"
    assert next(model.parameters()).is_cuda, "the model's parameters are not on the GPU after fit_torch"

