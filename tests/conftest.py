"""Fixtures shared by the package's own tests."""

from __future__ import annotations

import pytest

from graders.judge import examples_cache
from graders.judge.checks import base

SMALL_EXAMPLE_BUDGET = 8


@pytest.fixture
def small_example_budget(monkeypatch) -> int:
    """At most SMALL_EXAMPLE_BUDGET Hypothesis examples per property, for tests that check a score, never a
    message: whether an attack is held does not depend on how many inputs are drawn, and a grade costs less."""
    run = base.Context._run

    def capped(ctx, strategy, body, examples: int) -> None:
        run(ctx, strategy, body, min(examples, SMALL_EXAMPLE_BUDGET))

    monkeypatch.setattr(base.Context, "_run", capped)
    # Fewer draws than a grade makes must never be kept where a later grade would read them as the whole set.
    monkeypatch.setenv(examples_cache.CACHE_ENV, "off")
    return SMALL_EXAMPLE_BUDGET


# pytest-xdist's --dist loadgroup sends the tests of one xdist_group to one worker by the suffix "@<group>" it puts
# on their node ids, setting each item's _nodeid. pytest 9.2 makes node ids from a structured _id instead, and the
# suffix is lost (pytest-dev/pytest-xdist#1386): every group then spread over all workers, and the hostile corpus's
# machine-wide checks saw a test of the same group's files beside them, the nbgrader suite built its course on two
# workers at once. Where xdist's suffix did not take, it is put where pytest reads it.
def _with_suffix(item, suffix: str) -> bool:
    """Give ``item`` the node id ``<its node id>@<suffix>`` as pytest 9.2 reads it; False where it cannot."""
    parse = getattr(getattr(item, "_id", None), "parse", None)
    if parse is None:
        return False
    item._id = parse(f"{item.nodeid}@{suffix}")
    return item.nodeid.endswith(f"@{suffix}")


def _groups_hold() -> bool:
    """Whether the tests of an xdist_group can be named for their group here (xdist's way or ours)."""
    probe = object.__new__(pytest.Function)  # no __init__: only the node id is asked
    probe._nodeid = "probe@group"
    try:
        if pytest.Function.nodeid.fget(probe) == "probe@group":
            return True
    except AttributeError:
        pass
    try:
        from _pytest.nodeid import NodeId
    except ImportError:
        return False
    probe._id = NodeId.parse("probe")
    return _with_suffix(probe, "group")


def pytest_configure(config):
    """Stop a parallel run whose groups would not hold, with a line that says what to do."""
    distributed = config.getoption("numprocesses", None) and config.getoption("dist", "no") == "loadgroup"
    if distributed and not hasattr(config, "workerinput") and not _groups_hold():
        raise pytest.UsageError(
            f"pytest {pytest.__version__} with pytest-xdist cannot keep the tests of an xdist_group on one worker: "
            "install the pinned test tools (pip install -c .ci/constraints.txt -e '.[dev]'), or run without "
            "workers (-n 0)")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """In an xdist worker under --dist loadgroup: each test of a group named for it, where xdist's naming did not
    take (pytest 9.2)."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if names and not item.nodeid.endswith("@" + "_".join(names)):
            _with_suffix(item, "_".join(names))
