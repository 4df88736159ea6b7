"""Task 4: the DataLoader. X holds 0, 1, ..., n - 1 and Y = 10 X, so every
batch shows which examples it holds and whether X and Y still line up."""

import numpy as np
import pytest

from .. import DataLoader, Tensor


def numbered(n: int) -> tuple[np.ndarray, np.ndarray]:
    X = np.arange(n, dtype=np.float64).reshape(n, 1)
    return X, 10 * X


def epoch(loader) -> list[tuple[np.ndarray, np.ndarray]]:
    """One pass over the loader, as plain arrays."""
    batches = []
    for xb, yb in loader:
        assert isinstance(xb, Tensor) and isinstance(yb, Tensor), \
            f"the loader yielded ({type(xb).__name__}, {type(yb).__name__}), expected (Tensor, Tensor)"
        batches.append((xb.data, yb.data))
    return batches


def order(batches) -> list[int]:
    """The example numbers an epoch visited, in order."""
    return [int(v) for xb, _ in batches for v in xb.ravel()]


# ----- 4.1 batching, coverage, drop_last, len -----

@pytest.mark.task4_1
def test_batches_have_batch_size_and_a_smaller_last_one():
    """Do 10 examples in batches of 4 come as sizes [4, 4, 2], in the data's order when not shuffling?"""
    batches = epoch(DataLoader(*numbered(10), batch_size=4, shuffle=False))
    assert [len(xb) for xb, _ in batches] == [4, 4, 2], f"batch sizes {[len(xb) for xb, _ in batches]}"
    assert order(batches) == list(range(10)), f"examples came in the order {order(batches)}"


@pytest.mark.task4_1
def test_batches_hold_the_values_given_to_float64_precision():
    """Given values like 0.1 and 1/3, and an int Y, are the batches float64 and exactly those values (nothing rounded
    through float32 on the way)?"""
    X, Y = np.arange(6, dtype=np.float64).reshape(6, 1) / 3 + 0.1, np.arange(6).reshape(6, 1)
    batches = epoch(DataLoader(X, Y, batch_size=4, shuffle=False))
    for xb, yb in batches:
        assert xb.dtype == np.float64 and yb.dtype == np.float64, \
            f"batches of dtype ({xb.dtype}, {yb.dtype}), expected float64: np.asarray(X, dtype=np.float64)"
    rows = sum(len(xb) for xb, _ in batches)
    assert rows == len(X), (f"the batches held {rows} of the {len(X)} rows (batch sizes "
                            f"{[len(xb) for xb, _ in batches]}, expected [4, 2]): with drop_last=False the last, "
                            "smaller batch is kept")
    assert np.array_equal(np.concatenate([xb for xb, _ in batches]), X), \
        "the batches' x are not exactly the X given: keep the arrays in float64, never float32"


@pytest.mark.task4_1
def test_drop_last_drops_the_smaller_last_batch():
    """With drop_last=True, do 10 examples in batches of 4 come as sizes [4, 4]?"""
    batches = epoch(DataLoader(*numbered(10), batch_size=4, shuffle=False, drop_last=True))
    assert [len(xb) for xb, _ in batches] == [4, 4], f"batch sizes {[len(xb) for xb, _ in batches]}"


@pytest.mark.task4_1
def test_len_is_the_number_of_batches():
    """Is len(loader) 3 for 10 examples in batches of 4, 2 with drop_last, and 2 for 8 examples?"""
    for n, drop_last, batches in ((10, False, 3), (10, True, 2), (8, False, 2), (8, True, 2)):
        got = len(DataLoader(*numbered(n), batch_size=4, drop_last=drop_last))
        assert got == batches, (f"len() of a loader of {n} examples, batch_size=4, drop_last={drop_last} is {got}, "
                                f"expected {batches} (the number of batches one epoch gives)")


@pytest.mark.task4_1
def test_a_shuffled_epoch_covers_every_example_once_with_x_and_y_aligned():
    """Does a shuffled epoch hold each of the 10 examples exactly once, each x with its own y?"""
    batches = epoch(DataLoader(*numbered(10), batch_size=3, shuffle=True, rng=np.random.default_rng(0)))
    assert sorted(order(batches)) == list(range(10)), f"a shuffled epoch held {sorted(order(batches))}"
    for xb, yb in batches:
        assert np.array_equal(yb, 10 * xb), f"a batch paired x = {xb.ravel()} with y = {yb.ravel()}"


@pytest.mark.task4_1
def test_batches_keep_the_feature_shape():
    """With X of shape (6, 2) and Y of shape (6, 1), are batches of 4 shaped (4, 2) and (4, 1)?"""
    loader = DataLoader(np.zeros((6, 2)), np.zeros((6, 1)), batch_size=4, shuffle=False)
    shapes = [(xb.shape, yb.shape) for xb, yb in epoch(loader)]
    assert shapes == [((4, 2), (4, 1)), ((2, 2), (2, 1))], f"batch shapes {shapes}"


@pytest.mark.task4_1
def test_batches_do_not_require_grad():
    """Are the batches plain tensors, without requires_grad?"""
    for xb, yb in DataLoader(*numbered(4), batch_size=2, shuffle=False):
        assert not xb.requires_grad and not yb.requires_grad, "a batch requires grad"


# ----- 4.2 shuffling -----

@pytest.mark.task4_2
def test_without_shuffle_every_epoch_has_the_data_order():
    """With shuffle=False, do two epochs both visit the examples in order 0..9?"""
    loader = DataLoader(*numbered(10), batch_size=4, shuffle=False)
    for n in (1, 2):
        seen = order(epoch(loader))
        assert seen == list(range(10)), f"epoch {n} without shuffle came in the order {seen}, expected 0 to 9"


@pytest.mark.task4_2
def test_shuffle_changes_the_order():
    """With shuffle=True, do 100 examples come in some other order than 0..99?"""
    loader = DataLoader(*numbered(100), batch_size=10, shuffle=True, rng=np.random.default_rng(0))
    assert order(epoch(loader)) != list(range(100)), "shuffle=True kept the data's order"


@pytest.mark.task4_2
def test_shuffle_mixes_the_examples_not_only_the_batches():
    """With shuffle=True, does some batch of 100 examples in batches of 10 mix examples from different batches of the
    data's order (a shuffled list of the in-order batches would hold 0-9, 10-19, ... whole)?"""
    loader = DataLoader(*numbered(100), batch_size=10, shuffle=True, rng=np.random.default_rng(0))
    blocks = [sorted(int(v) for v in xb.ravel()) for xb, _ in epoch(loader)]
    assert any(block != list(range(block[0], block[0] + 10)) for block in blocks), (
        f"every batch held one batch of the data's order, whole (the first: {blocks[0]}): shuffle the examples, not "
        "the batches, slicing consecutive batches out of self.rng.permutation(n)")


@pytest.mark.task4_2
def test_each_epoch_draws_a_fresh_permutation():
    """Do two epochs of one shuffling loader visit the 100 examples in different orders?"""
    loader = DataLoader(*numbered(100), batch_size=10, shuffle=True, rng=np.random.default_rng(0))
    first, second = order(epoch(loader)), order(epoch(loader))
    assert sorted(second) == list(range(100)), "the second epoch did not cover every example once"
    assert first != second, "both epochs used the same order: draw a new permutation in every iter()"


@pytest.mark.task4_2
def test_shuffling_leaves_the_callers_arrays_as_they_were():
    """After a shuffled epoch, are the X and Y the caller gave still in their order (the loader indexes them, it
    never reorders them in place)?"""
    X, Y = numbered(10)
    epoch(DataLoader(X, Y, batch_size=4, shuffle=True, rng=np.random.default_rng(0)))
    assert np.array_equal(X, numbered(10)[0]) and np.array_equal(Y, numbered(10)[1]), \
        "the loader reordered the caller's X and Y: index them with the permutation (X[idx]), never shuffle them"


@pytest.mark.task4_2
def test_the_same_seed_gives_the_same_batches():
    """Do two loaders given generators with the same seed yield the same batches, epoch after epoch?"""
    a = DataLoader(*numbered(20), batch_size=6, shuffle=True, rng=np.random.default_rng(7))
    b = DataLoader(*numbered(20), batch_size=6, shuffle=True, rng=np.random.default_rng(7))
    for n in (1, 2):
        assert order(epoch(a)) == order(epoch(b)), f"epoch {n} differs between two loaders seeded alike"


@pytest.mark.task4_2
def test_the_order_comes_from_the_generator_given():
    """Do loaders given generators with different seeds shuffle differently (the order is drawn from rng, not
    from a generator of the loader's own)?"""
    orders = {seed: order(epoch(DataLoader(*numbered(50), batch_size=10, shuffle=True,
                                           rng=np.random.default_rng(seed)))) for seed in (1, 2)}
    assert orders[1] != orders[2], "seeds 1 and 2 gave the same order: shuffle with the rng the loader is given"
