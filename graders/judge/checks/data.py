"""Tasks 4.1 and 4.2: the student's DataLoader, batch by batch.

Row i of X starts with i (further columns i + 0.1, i + 0.2) and row i of Y is
10 i + 0.01 (and 10 i + 0.02), so every batch shows which examples it holds
and whether X and Y still line up. The judge reads the batches the worker
reports; what they must be follows from n, batch_size and drop_last alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from graders import messages as msg
from graders.judge.checks.base import CheckFailed, Context

# Epochs per loader: at the fixed points, then over drawn setups (each epoch is ~2 arrays a batch to send).
EPOCHS_IN_ORDER, EPOCHS_SHUFFLED, EPOCHS_DRAWN = 2, 3, 2
EXAMPLES_IN_ORDER, EXAMPLES_SHUFFLED = 40, 12
SHOWN = 8  # example numbers named in a message


@dataclass(frozen=True)
class Setup:
    """One DataLoader the judge asks for: n examples, the batch size and flags, and the widths of X and Y. Everything a
    correct loader must yield follows from these fields alone, so the judge needs no loader of its own."""
    n: int
    batch_size: int
    drop_last: bool = False
    shuffle: bool = False
    x_width: int = 1
    y_width: int = 1

    @property
    def X(self) -> np.ndarray:
        """The inputs: row i starts with i (then i + 0.1, i + 0.2), so any row of a batch names the example it is."""
        return np.arange(self.n)[:, None] + np.arange(self.x_width) / 10

    @property
    def Y(self) -> np.ndarray:
        """The targets: row i is 10 i + 0.01 (then 10 i + 0.02), so a batch shows whether its X and Y rows still belong
        together."""
        return 10.0 * np.arange(self.n)[:, None] + np.arange(1, self.y_width + 1) / 100

    @property
    def sizes(self) -> list[int]:
        """The batch sizes a correct loader yields: full batches, then the rest unless drop_last drops it."""
        full, rest = divmod(self.n, self.batch_size)
        return [self.batch_size] * full + ([rest] if rest and not self.drop_last else [])

    @property
    def text(self) -> str:
        """The loader's arguments as a message names them (batch_size, shuffle, drop_last)."""
        return msg.LOADER_SETUP.format(batch_size=self.batch_size, shuffle=self.shuffle, drop_last=self.drop_last)

    @property
    def data_line(self) -> str:
        """The message line that says which data and loader a failure was seen on, so a student can rebuild the case."""
        return msg.LOADER_DATA.format(setup=self.text, n=self.n)

    def args(self, package: str) -> dict:
        """The keyword arguments of the worker's loader_epochs verb for this setup in ``package`` (the task's route's):
        the package, the data, the batch size and drop_last."""
        return dict(package=package, X=self.X, Y=self.Y, batch_size=self.batch_size, drop_last=self.drop_last)


def fail(ctx: Context, setup: Setup, text: str, hint: str | None = None, **fields):
    """Fail the task with ``text`` filled from ``fields``, the loader's data line and a hint line, so every DataLoader
    message has the same shape."""
    raise CheckFailed(msg.lines(text.format(**fields, **msg.header(ctx.task)), setup.data_line,
                                hint and msg.HINT.format(hint=hint)))


def numbers(values) -> str:
    """Example numbers as a message shows them: the first SHOWN, then an ellipsis, so a long epoch stays one readable
    line."""
    values = [int(v) for v in values]
    return ", ".join(map(str, values[:SHOWN])) + (", ..." if len(values) > SHOWN else "")


def order_text(order) -> str:
    """An epoch's order of examples as a message shows it, in brackets."""
    return f"[{numbers(order)}]"


def count_hint(setup: Setup, got: int) -> str:
    """The hint for a wrong count of batches: it names drop_last when one batch too many or too few is the last, partial
    one, and slicing otherwise."""
    rest = setup.n % setup.batch_size
    if rest and setup.drop_last and got == len(setup.sizes) + 1:
        return msg.HINT_LOADER_DROP_LAST
    if rest and not setup.drop_last and got == len(setup.sizes) - 1:
        return msg.HINT_LOADER_KEEP_LAST.format(rest=rest)
    return msg.HINT_LOADER_SLICES


def narrowed(got: np.ndarray, want: np.ndarray) -> str | None:
    """The narrower float type (float32 or float16) that rounded ``want`` into ``got``, or None where ``got`` is
    ``want`` itself or not a rounding of it: a loader that casts its batches keeps every example in place, so
    without this its rows read as strangers to the data (0.01 is 0.009999999776 in float32)."""
    if np.array_equal(got, want):
        return None
    return next((np.dtype(t).name for t in (np.float32, np.float16)
                 if np.array_equal(got, want.astype(t).astype(np.float64))), None)


def read_epoch(ctx: Context, setup: Setup, epoch: dict, number: int, strict: bool = True) -> np.ndarray:
    """The example numbers the epoch visited, in order, after each batch's types, sizes, shapes,
    rows and pairing, and the epoch's coverage. ``strict`` checks requires_grad too (task 4.1's)."""
    if len(epoch.batches) > setup.n:  # every batch holds an example: at most n of them (the worker stops at n + 1)
        fail(ctx, setup, msg.LOADER_TOO_MANY, msg.HINT_LOADER_TOO_MANY, epoch=number,
             limit=f"{setup.n} batch" if setup.n == 1 else f"{setup.n} batches",
             expected=len(setup.sizes))
    batches = epoch.batches
    for j, batch in enumerate(batches, 1):
        if not batch["pair"]:
            fail(ctx, setup, msg.LOADER_NOT_PAIR, batch=j, epoch=number, type=batch["type"])
        for name, side in (("xb", batch["x"]), ("yb", batch["y"])):
            if not side["tensor"]:
                fail(ctx, setup, msg.WRONG_KIND, what=f"{name} of batch {j}", got=f"a {side['type']}",
                     expected="a Tensor")
            if strict and side["requires_grad"].get("value") is not False:
                fail(ctx, setup, msg.WRONG_KIND, msg.HINT_LOADER_NO_GRAD, what=f"{name}.requires_grad of batch {j}",
                     got=side["requires_grad"].get("value", side["requires_grad"].get("type")), expected="False")
    sizes = [(np.shape(b["x"]["data"].get("array", ())) or (0,))[0] for b in batches]
    if len(sizes) != len(setup.sizes):
        fail(ctx, setup, msg.LOADER_COUNT, count_hint(setup, len(sizes)), epoch=number, got=len(sizes),
             sizes=sizes, expected=len(setup.sizes), expected_sizes=setup.sizes)
    if sizes != setup.sizes:
        fail(ctx, setup, msg.LOADER_SIZES, msg.HINT_LOADER_SLICES, epoch=number, got=sizes, expected=setup.sizes)
    X, Y, ids = setup.X, setup.Y, []
    for j, (batch, size) in enumerate(zip(batches, sizes), 1):
        xb = ctx.array(batch["x"]["data"], (size, setup.x_width), f"xb of batch {j}")
        yb = ctx.array(batch["y"]["data"], (size, setup.y_width), f"yb of batch {j}")
        index = np.rint(np.clip(xb[:, 0], -1, setup.n)).astype(int)
        known = np.clip(index, 0, setup.n - 1)
        for name, got, want in (("xb", xb, X[known]), ("yb", yb, Y[known])):
            if (narrow := narrowed(got, want)) is not None:
                row, col = np.argwhere(got != want)[0]
                fail(ctx, setup, msg.LOADER_ROUNDED, msg.HINT_LOADER_PRECISION, name=name, batch=j, epoch=number,
                     dtype=narrow, got=repr(float(got[row, col])), want=repr(float(want[row, col])))
        stray = (index != known) | ~(xb == X[known]).all(axis=1)
        if stray.any():
            row = int(np.argmax(stray))
            fail(ctx, setup, msg.LOADER_ROW, msg.HINT_LOADER_ROWS, row=row, batch=j, epoch=number,
                 got=msg.array_text(xb[row]))
        unpaired = ~(yb == Y[index]).all(axis=1)
        if unpaired.any():
            row = int(np.argmax(unpaired))
            found = np.flatnonzero((Y == yb[row]).all(axis=1))
            fail(ctx, setup, msg.LOADER_UNPAIRED, msg.HINT_LOADER_PAIRS, batch=j, epoch=number, row=row,
                 x=index[row], y=msg.LOADER_Y_ROW.format(y=found[0]) if len(found) else
                 msg.LOADER_Y_STRAY.format(got=msg.array_text(yb[row])))
        ids.append(index)
    order = np.concatenate(ids) if ids else np.zeros(0, dtype=int)
    counts = np.bincount(order, minlength=setup.n)
    repeated, missing = np.flatnonzero(counts > 1), np.flatnonzero(counts == 0)
    if len(repeated):
        fail(ctx, setup, msg.LOADER_REPEATED, msg.HINT_LOADER_COVERAGE, epoch=number, repeated=numbers(repeated),
             missing=msg.LOADER_AND_MISSING.format(missing=numbers(missing)) if len(missing) else "")
    if len(missing) and not setup.drop_last:
        fail(ctx, setup, msg.LOADER_MISSING, msg.HINT_LOADER_COVERAGE, epoch=number, missing=numbers(missing))
    return order


def epochs(ctx: Context, setup: Setup, count: int, *, seeds=(None,), global_seeds=None, strict: bool = True,
           length: bool = False):
    """``count`` epochs of one loader per seed, each read by read_epoch, and the first loader's len() when asked."""
    doing = msg.LOADER_DOING.format(setup=setup.text, epochs=count) + (msg.LOADER_DOING_LEN if length else "")
    answer = ctx.ask("loader_epochs", doing, shuffle=setup.shuffle, epochs=count, seeds=list(seeds),
                     global_seeds=global_seeds, length=length, **setup.args(ctx.task.route.package))
    loaders = answer.loaders
    if answer.data_kept is False:
        fail(ctx, setup, msg.LOADER_DATA_CHANGED, msg.HINT_LOADER_KEEP_DATA, doing=doing)
    if len(loaders) != len(seeds) or any(len(passes) != count for passes in loaders) \
            or (length and not isinstance(answer.length, dict)):
        raise CheckFailed(msg.ANSWER_INCOMPLETE.format(doing=doing, **msg.header(ctx.task)))
    return [[read_epoch(ctx, setup, epoch, e, strict) for e, epoch in enumerate(passes, 1)]
            for passes in loaders], answer.length


# ----- 4.1 batching, in the data's order -----
def check_in_order(ctx: Context, setup: Setup, count: int = EPOCHS_IN_ORDER) -> None:
    """Task 4.1 on one setup: ``count`` epochs, each in the data's order with the right batches (read_epoch), and len()
    equal to the number of batches."""
    (passes,), length = epochs(ctx, setup, count, length=True)
    for order in passes:
        if not np.array_equal(order, np.arange(len(order))):
            fail(ctx, setup, msg.LOADER_ORDER, msg.HINT_LOADER_ORDER, got=order_text(order),
                 expected=order_text(range(len(order))))
    if length.get("type") != "int" or length.get("value") != len(setup.sizes):
        fail(ctx, setup, msg.LOADER_LENGTH, msg.HINT_LOADER_LENGTH, got=length.get("value", length.get("type")),
             expected=len(setup.sizes))


@st.composite
def in_order_setups(draw):
    """Drawn setups for task 4.1: up to 50 examples, batch sizes from a twelfth of n to past n, drop_last either way, X
    and Y of a few widths; small enough that the batches stay quick to send."""
    n = draw(st.integers(1, 50))  # a dozen batches at most: each is two arrays to send and read
    return Setup(n, draw(st.integers(max(1, n // 12), n + 5)), draw(st.booleans()), x_width=draw(st.integers(1, 3)),
                 y_width=draw(st.integers(1, 2)))


def batching(ctx: Context) -> None:
    """Task 4.1's check: three fixed setups (a partial last batch kept, dropped, and wider rows), then drawn ones, every
    batch read in order."""
    for setup in (Setup(10, 4), Setup(10, 4, drop_last=True), Setup(12, 4, drop_last=True, x_width=3, y_width=2)):
        check_in_order(ctx, setup)
    ctx.forall(in_order_setups(), lambda setup: check_in_order(ctx, setup, count=1), examples=EXAMPLES_IN_ORDER)


# ----- 4.2 shuffling, reproducible from the loader's rng -----
# n is a multiple of batch_size and drop_last is off, so a mistake in the last batch, drop_last,
# len() or requires_grad costs task 4.1 alone.
def check_shuffled(ctx: Context, setup: Setup, seed: int, count: int = EPOCHS_SHUFFLED) -> None:
    """Three loaders: two given default_rng(seed), one default_rng(seed + 1); numpy's global
    generator is reseeded differently before every pass of each."""
    (first, twin, other), _ = epochs(ctx, setup, count, strict=False, seeds=[seed, seed, seed + 1],
                                     global_seeds=[[1000 * j + e for e in range(count)] for j in (1, 2, 3)])
    in_order = [np.array_equal(order, np.arange(len(order))) for order in first]
    if not all(in_order) and all(whole_batches(order, setup.batch_size) for order in first):
        fail(ctx, setup, msg.LOADER_WHOLE_BATCHES, msg.HINT_LOADER_EXAMPLES, epochs=count,
             batches=batches_text(first[0], setup.batch_size))
    if np.array_equal(first[0], np.arange(len(first[0]))):
        fail(ctx, setup, msg.LOADER_NOT_SHUFFLED, msg.HINT_LOADER_SHUFFLE, epoch=1, order=order_text(first[0]))
    for e in range(1, count):
        if np.array_equal(first[e - 1], first[e]):
            fail(ctx, setup, msg.LOADER_SAME_EPOCHS, msg.HINT_LOADER_FRESH, a=e, b=e + 1, order=order_text(first[e]))
    for e, (mine, theirs) in enumerate(zip(first, twin), 1):
        if not np.array_equal(mine, theirs):
            fail(ctx, setup, msg.LOADER_NOT_REPRODUCIBLE, msg.HINT_LOADER_RNG, seed=seed, epoch=e,
                 a=order_text(mine), b=order_text(theirs))
    if np.array_equal(first[0], other[0]):
        fail(ctx, setup, msg.LOADER_IGNORES_RNG, msg.HINT_LOADER_RNG, a=seed, b=seed + 1,
             order=order_text(first[0]))


def whole_batches(order: np.ndarray, batch_size: int) -> bool:
    """Whether every batch of an epoch's ``order`` holds exactly the examples of one batch of the data's order (in any
    order within it): the batches were shuffled, not the examples. A fair shuffle of the setups' 20 or more examples
    in batches of 3 or more practically never does that."""
    if len(order) == 0 or len(order) % batch_size:
        return False
    rows = np.sort(np.asarray(order).reshape(-1, batch_size), axis=1)
    return all(row[0] % batch_size == 0 and np.array_equal(row, np.arange(row[0], row[0] + batch_size)) for row in rows)


def batches_text(order: np.ndarray, batch_size: int) -> str:
    """An epoch's first batches as a message shows them: [4, 5, 6], [0, 1, 2], ..."""
    rows = np.asarray(order).reshape(-1, batch_size)
    return ", ".join(f"[{numbers(row)}]" for row in rows[:3]) + (", ..." if len(rows) > 3 else "")


@st.composite
def shuffled_setups(draw):
    """Drawn setups for task 4.2 and a seed: at least 20 examples in full batches (so two fair shuffles practically
    never agree and a mistake in the last batch stays 4.1's)."""
    batch_size = draw(st.integers(3, 16))  # n >= 20: two fair draws of 20! orders agree less than once in 10**18
    n = batch_size * draw(st.integers(-(-20 // batch_size), 64 // batch_size))
    return Setup(n, batch_size, shuffle=True, x_width=draw(st.integers(1, 2))), draw(st.integers(0, 2**16))


def shuffling(ctx: Context) -> None:
    """Task 4.2's check: two fixed shuffled setups, then drawn ones, each by check_shuffled."""
    check_shuffled(ctx, Setup(24, 6, shuffle=True), seed=0)
    check_shuffled(ctx, Setup(30, 5, shuffle=True, x_width=2, y_width=2), seed=1)
    ctx.forall(shuffled_setups(), lambda drawn: check_shuffled(ctx, *drawn, count=EPOCHS_DRAWN),
               examples=EXAMPLES_SHUFFLED)
