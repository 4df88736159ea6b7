"""The generated exercises/ stay in step with solutions/, and the stub generator keeps its rules."""

import re

import pytest

from graders import build, paths

MARKED = '''def double(x):
    """2 x."""
    ### BEGIN SOLUTION (Task 9.9: double)
    y = x + x
    return y
    ### END SOLUTION
'''


def test_exercises_are_in_sync_with_solutions():
    """Would regenerating exercises/ from solutions/ change nothing?"""
    stale = build.out_of_sync(paths.SOLUTIONS, paths.EXERCISES)
    assert stale == [], f"exercises/ out of sync for {stale}: run `autograd-lab build-exercises`"


def test_a_marked_region_becomes_one_raise_at_the_marker_indentation():
    """Does a BEGIN/END SOLUTION region become one `raise NotImplementedError` line with the task label?"""
    assert build.stub_source(MARKED) == (
        'def double(x):\n'
        '    """2 x."""\n'
        '    raise NotImplementedError("Task 9.9: double")\n'
    )


def test_text_without_markers_is_copied_as_it_is():
    """Is a file with no solution region left exactly as it was?"""
    text = "import numpy as np\n\n\ndef given():\n    return 1\n"
    assert build.stub_source(text) == text


@pytest.mark.parametrize("text, message", [
    ("    ### BEGIN SOLUTION (Task 9.9: double)\n    return 2 * x\n",
     "broken.py:1: BEGIN SOLUTION without END SOLUTION"),
    ("    return 2 * x\n    ### END SOLUTION\n", "broken.py:2: unexpected or malformed marker"),
    ("    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n", "broken.py:1: unexpected or malformed marker"),
], ids=["begin-without-end", "end-without-begin", "begin-without-task-id"])
def test_an_unpaired_or_unlabelled_marker_raises_marker_error(text, message):
    """Does a marker that does not pair up, or carries no task id, raise MarkerError naming the file and line?"""
    with pytest.raises(build.MarkerError, match="^" + re.escape(message)):
        build.stub_source(text, "broken.py")
