"""The ops whose backward rules the op tasks grade, as the public tests use them:
generated from graders/tasks.py and graders/ops.py by `autograd-lab build-exercises`: do not edit.

Each op: its name, its task and that task's marker, its forward (how your Tensor computes it), the forms its rule is
checked in (how each reads, and the kind of inputs drawn for it: tests/test_properties.py), and its cost as the graded
run times it (tests/test_cost.py): numpy's own op, the large input's operands and keyword arguments, and how many
times numpy's op the rule may take.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Form(NamedTuple):
    text: str
    domain: str
    bounds: dict


class Large(NamedTuple):
    shape: str  # "rc": (rows, cols), "c": (cols,), "nn": (n, n)
    low: float
    high: float
    normal: bool


class Cost(NamedTuple):
    text: str
    numpy: Callable
    limit: float
    operands: tuple
    kwargs: dict


class Op(NamedTuple):
    name: str
    task: str
    marker: str
    forward: Callable
    forms: tuple
    cost: Cost


UNBROADCAST_LIMIT = 50
OPS = (
    Op("add", "1.2", "task1_2", lambda x, y: x + y, (
        Form("x + y", "operand_pairs", {}),
        Form("x + 2.5", "operands_with_constants", {"left": False}),
        Form("2.5 + y", "operands_with_constants", {"left": True}),
    ), Cost("x + y", lambda x, y: x + y, 30,
            (Large("rc", -1.0, 1.0, False), Large("rc", -1.0, 1.0, False)), {})),
    Op("sub", "1.2", "task1_2", lambda x, y: x - y, (
        Form("x - y", "operand_pairs", {}),
        Form("2.5 - y", "operands_with_constants", {"left": True}),
    ), Cost("x - y", lambda x, y: x - y, 30,
            (Large("rc", -1.0, 1.0, False), Large("rc", -1.0, 1.0, False)), {})),
    Op("neg", "1.2", "task1_2", lambda x: -x, (
        Form("-x", "single_operands", {}),
    ), Cost("-x", lambda x: -x, 30,
            (Large("rc", -1.0, 1.0, False),), {})),
    Op("mul", "1.3", "task1_3", lambda x, y: x * y, (
        Form("x * y", "operand_pairs", {}),
        Form("x * 2.5", "operands_with_constants", {"left": False}),
    ), Cost("x * y", lambda x, y: x * y, 60,
            (Large("rc", -1.0, 1.0, False), Large("rc", -1.0, 1.0, False)), {})),
    Op("div", "1.3", "task1_3", lambda x, y: x / y, (
        Form("x / y", "operand_pairs", {"divisor": True}),
        Form("2.5 / y", "operands_with_constants", {"left": True, "divisor": True}),
    ), Cost("x / y", lambda x, y: x / y, 50,
            (Large("rc", -1.0, 1.0, False), Large("rc", 0.5, 1.5, False)), {})),
    Op("matmul", "1.4", "task1_4", lambda x, w: x @ w, (
        Form("x @ w", "matmul_operands", {}),
    ), Cost("x @ w", lambda x, w: x @ w, 100,
            (Large("nn", -1.0, 1.0, False), Large("nn", -1.0, 1.0, True)), {})),
    Op("pow", "1.5", "task1_5", lambda x, p: x ** p, (
        Form("x ** p", "power_operands", {}),
    ), Cost("x ** 3", lambda x, p: x ** p, 15,
            (Large("rc", 0.5, 1.5, False),), {"p": 3.0})),
    Op("exp", "1.5", "task1_5", lambda x: x.exp(), (
        Form("x.exp()", "single_operands", {}),
    ), Cost("x.exp()", np.exp, 40,
            (Large("rc", -1.0, 1.0, False),), {})),
    Op("log", "1.5", "task1_5", lambda x: x.log(), (
        Form("x.log()", "single_operands", {"min_value": 0.2, "max_value": 5.0}),
    ), Cost("x.log()", np.log, 20,
            (Large("rc", 0.5, 1.5, False),), {})),
    Op("relu", "1.6", "task1_6", lambda x: x.relu(), (
        Form("x.relu()", "single_operands", {"away_from_zero": 0.01}),
    ), Cost("x.relu()", lambda x: np.maximum(x, 0.0), 60,
            (Large("rc", -1.0, 1.0, False),), {})),
    Op("tanh", "1.6", "task1_6", lambda x: x.tanh(), (
        Form("x.tanh()", "single_operands", {}),
    ), Cost("x.tanh()", np.tanh, 15,
            (Large("rc", -1.0, 1.0, False),), {})),
    Op("sigmoid", "1.6", "task1_6", lambda x: x.sigmoid(), (
        Form("x.sigmoid()", "single_operands", {}),
    ), Cost("x.sigmoid()", lambda x: 1.0 / (1.0 + np.exp(-x)), 15,
            (Large("rc", -1.0, 1.0, False),), {})),
    Op("sum", "1.7", "task1_7", lambda x, axis=None, keepdims=False: x.sum(axis=axis, keepdims=keepdims), (
        Form("x.sum(axis, keepdims)", "reduction_operands", {}),
    ), Cost("x.sum(axis=0)", lambda x, axis: np.sum(x, axis=axis), 30,
            (Large("rc", -1.0, 1.0, False),), {"axis": 0})),
    Op("mean", "1.7", "task1_7", lambda x, axis=None, keepdims=False: x.mean(axis=axis, keepdims=keepdims), (
        Form("x.mean(axis, keepdims)", "reduction_operands", {}),
    ), Cost("x.mean(axis=0)", lambda x, axis: np.mean(x, axis=axis), 40,
            (Large("rc", -1.0, 1.0, False),), {"axis": 0})),
    Op("square_mean", "1.7", "task1_7", lambda x: x.square_mean(), (
        Form("x.square_mean()", "single_operands", {"min_dims": 1}),
    ), Cost("x.square_mean()", lambda x: np.mean(x**2), 20,
            (Large("rc", -1.0, 1.0, False),), {})),
    Op("reshape", "1.8", "task1_8", lambda x, shape: x.reshape(*shape), (
        Form("x.reshape(*shape)", "reshape_operands", {}),
    ), Cost("x.reshape(-1)", lambda x, shape: x.reshape(shape).copy(), 60,
            (Large("rc", -1.0, 1.0, False),), {"shape": [-1]})),
    Op("T", "1.8", "task1_8", lambda x: x.T, (
        Form("x.T", "single_operands", {}),
    ), Cost("x.T", lambda x: x.T.copy(), 30,
            (Large("rc", -1.0, 1.0, False),), {})),
)
