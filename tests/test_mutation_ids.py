"""Do the mutation test's reviewed mutants, and every mutant the docs quote, name a mutant that exists? Ids name the
function an edit is in (tests/benchmarks/mutants.py), so an edit elsewhere leaves them be; an edit of that function
can still retire one, and this says which."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from graders import paths

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
import mutation  # noqa: E402
from mutants import mutants_of  # noqa: E402

DOCS = sorted([paths.REPO / "README.md", *(paths.REPO / "docs").glob("*.md")])
QUOTED = re.compile(r"`(\w+\.py:[\w.]+:[\w-]+(?:#\d+)?)`")


@pytest.fixture(scope="module")
def every_id() -> set[str]:
    return {m.id for name in mutation.graded_files() for m in mutants_of(name, (paths.SOLUTIONS / name).read_text())}


def test_a_mutant_is_named_by_its_function_not_its_line():
    """Is a mutant's id ``file:function:kind``, the same when lines are added above the function?"""
    text = "def f(x):\n    ### BEGIN SOLUTION (Task 9.9: f)\n    return x + 1\n    ### END SOLUTION\n"
    ids = [m.id for m in mutants_of("f.py", text)]
    assert "f.py:f:binop-add-sub" in ids
    assert [m.id for m in mutants_of("f.py", "import os\n\n\n" + text)] == ids


@pytest.mark.parametrize("table", ["EQUIVALENT", "SEEN_ON_CUDA_ONLY"])
def test_every_reviewed_mutant_exists(table, every_id):
    """Does every id of mutation.py's EQUIVALENT and SEEN_ON_CUDA_ONLY name a mutant of solutions/ today?"""
    assert sorted(set(getattr(mutation, table)) - every_id) == []


def test_every_mutant_the_docs_quote_exists(every_id):
    """Does every mutant id README.md or a page of docs/ quotes name a mutant of solutions/ today?"""
    quoted = {(path.name, found) for path in DOCS for found in QUOTED.findall(path.read_text())}
    assert quoted, "the docs quote no mutant: has the way they quote ids changed?"
    assert sorted((name, found) for name, found in quoted if found not in every_id) == []
