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


def _groups_hold() -> bool:
    """Whether pytest-xdist's ``--dist loadgroup`` can put the tests of one ``xdist_group`` on one worker here: it
    names each such test ``<node id>@<group>`` by setting the item's ``_nodeid``, which pytest 9.2 no longer reads
    (its node ids come from a structured ``_id``), and the groups then silently spread over every worker."""
    probe = object.__new__(pytest.Function)  # no __init__: only the property is asked
    probe._nodeid = "probe@group"
    try:
        return pytest.Function.nodeid.fget(probe) == "probe@group"
    except AttributeError:
        return False


def pytest_configure(config):
    """Stop a parallel run whose groups would not hold. The tests of one group share what must not be shared
    across workers at once: the hostile corpus reads the whole machine's processes and /tmp after each grade, and
    the nbgrader suite builds its course once per worker and grades it with the judge of each."""
    distributed = config.getoption("numprocesses", None) and config.getoption("dist", "no") == "loadgroup"
    if distributed and not hasattr(config, "workerinput") and not _groups_hold():
        raise pytest.UsageError(
            f"pytest {pytest.__version__} with pytest-xdist cannot keep the tests of an xdist_group on one worker: "
            "install the pinned test tools (pip install -c .ci/constraints.txt -e '.[dev]'), or run without "
            "workers (-n 0)")
