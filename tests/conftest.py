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
