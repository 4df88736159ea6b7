"""The generated exercises/ stay in step with solutions/, and the stub generator keeps its rules."""

import re

import pytest

from graders import paths
from graders.course import build

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


def test_build_exercises_never_writes_over_filled_in_work(tmp_path, capsys):
    """A student filled in one task of tensor.py in exercises/, and an instructor edited a docstring in another
    file: does build-exercises refuse (exit 1, writing nothing, naming tensor.py), update everything with
    --force, and rewrite a stub that only differs in its text without asking?"""
    from graders.cli import main

    out = tmp_path / "exercises"
    assert main(["build-exercises", "--out", str(out)]) == 0
    stub = (out / "tensor.py").read_text()
    filled = stub.replace('raise NotImplementedError("Task 1.1: unbroadcast")', "return grad", 1)
    assert filled != stub
    (out / "tensor.py").write_text(filled)
    (out / "optim.py").write_text((out / "optim.py").read_text().replace('"""', '"""Edited. ', 1))
    capsys.readouterr()
    assert main(["build-exercises", "--out", str(out)]) == 1
    said = capsys.readouterr().err
    assert "tensor.py" in said and "optim.py" not in said and "--force" in said
    assert (out / "tensor.py").read_text() == filled, "nothing written"
    assert (out / "optim.py").read_text() != stub, "nothing written, not even the files that were safe"
    assert main(["build-exercises", "--out", str(out), "--force"]) == 0
    assert (out / "tensor.py").read_text() == stub
    (out / "optim.py").write_text((out / "optim.py").read_text().replace('"""', '"""Edited. ', 1))
    assert main(["build-exercises", "--out", str(out)]) == 0, "a stub with other text is rewritten"


def test_help_lists_the_instructors_commands_first():
    from graders.cli import ORDER, parser

    text = parser().format_help()
    positions = [text.index(f"    {name} ") if f"    {name} " in text else text.index(f"    {name}\n")
                 for name in ORDER]
    assert positions == sorted(positions) and ORDER[0] == "grade" and ORDER[-1] == "build-exercises"
