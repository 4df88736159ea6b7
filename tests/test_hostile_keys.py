"""Hostile students against the keys: does a grade that counts draw each student's inputs from a key of their own,
so that what a classmate saw is no use, and refuse to grade where it has no key?

- classmates_timed_input: mallory's @ rule is exact but slow (a complex step, one entry at a time) on every input
  except the one the cost rung timed for a classmate, alice, which alice's scorecard shows her: there it uses the
  formula. Where a class shares one key (grade-all --key, as before each student had a key of their own), mallory's
  timed input is alice's, and the rule keeps 1.4's cost point (5 of 5, honestly 4). With keys of their own, the cost
  rung times mallory on an input of her own: 4 of 5.
- gradescope_fixed_timed_input: the same rule, fast on the inputs the cost rung times without a key (the graders'
  source names them), handed in on Gradescope. Before, Gradescope graded without a key: 5 of 5. Now the autograder
  grades with the student's key (4 of 5), and without a key it grades nothing (test_gradescope.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from corpus import make_submission

from graders import keys
from graders.classgrade import batch
from graders.course import course_file
from graders.integrations import gradescope
from graders.judge.checks import cost
from graders.ops import BY_NAME
from graders.tasks import BY_ID

pytestmark = pytest.mark.slow
SECRET = "ab" * 32

FAST_ONLY_ON = '''
_FAST_ON = @SHAPES@


def _matmul_fast_only_where_timed(self, other):
    other = _as_tensor(other)
    x, w = self.data, other.data

    def backward(g):
        if (x.shape, w.shape) in _FAST_ON:
            return g @ w.T, x.T @ g
        dx, dw = np.zeros_like(x), np.zeros_like(w)
        for i in np.ndindex(x.shape):
            step = x.astype(complex)
            step[i] += 1e-20j
            dx[i] = np.sum(g * (step @ w)).imag / 1e-20
        for i in np.ndindex(w.shape):
            step = w.astype(complex)
            step[i] += 1e-20j
            dw[i] = np.sum(g * (x @ step)).imag / 1e-20
        return dx, dw

    return op(x @ w, (self, other), backward)


Tensor.__matmul__ = _matmul_fast_only_where_timed
'''


def timed_shapes(key: int | None) -> set[tuple]:
    """The shapes of the large operands the cost rung of 1.4 times for a grade with ``key``: what a student sees on
    their scorecard when the rule is too slow, and passes on."""
    ctx = SimpleNamespace(key=key, task=BY_ID["1.4"])
    large = cost.cost_operands(ctx, BY_NAME["matmul"])[1]
    return {tuple(operand.shape for operand in large)}


def attacker(folder: Path, name: str, shapes: set[tuple]) -> Path:
    """The reference, its @ rule replaced by one that is fast on ``shapes`` only."""
    made = make_submission(folder, name, [])
    with open(made / "tensor.py", "a") as f:
        f.write(FAST_ONLY_ON.replace("@SHAPES@", repr(shapes)))
    return made


def only(task: str, path: Path) -> Path:
    """A course file that grades ``task`` alone, at its points."""
    text = course_file.template(SECRET)
    for other in BY_ID.values():
        if other.id != task and other.points:
            text = text.replace(f'"{other.id}" = {other.points}', f'"{other.id}" = 0')
    path.write_text(text)
    assert course_file.load(path).tasks == (task,)
    return path


def test_classmates_timed_input_is_no_use_when_each_student_has_a_key_of_their_own(tmp_path):
    """Does mallory's rule, fast only on alice's timed input, keep 1.4's cost point where the class shares one key
    (the control: the attack works) and lose it, 4 of 5, where each student's key is derived from the course's
    secret and their name?"""
    alice_key = keys.student_key(SECRET, "alice")
    assert timed_shapes(alice_key) != timed_shapes(keys.student_key(SECRET, "mallory"))
    shared = tmp_path / "shared"
    make_submission(shared, "alice", [])
    attacker(shared, "mallory", timed_shapes(20261201))
    one_key = batch.grade_all(shared, tmp_path / "one-key", jobs=2,
                              settings=batch.Settings(key=20261201, tasks=("1.4",)))
    assert {r.student: r.scores["1.4"] for r in one_key.records} == {"alice": 5, "mallory": 5}

    own = tmp_path / "own"
    make_submission(own, "alice", [])
    attacker(own, "mallory", timed_shapes(alice_key))
    course = only("1.4", tmp_path / "course.toml")
    keyed = batch.grade_all(own, tmp_path / "keyed", jobs=2, settings=batch.Settings(course=course_file.load(course)))
    assert {r.student: r.scores["1.4"] for r in keyed.records} == {"alice": 5, "mallory": 4}
    said = json.loads((tmp_path / "keyed" / "students" / "mallory" / "results.json").read_text())["tests"][0]["output"]
    assert "too slow" in said or "did not finish" in said, said


def test_gradescopes_grade_draws_the_students_own_timed_input(tmp_path):
    """Handed in on Gradescope, does the rule fast only on the fixed timed inputs (those of a grade without a key)
    lose 1.4's cost point, 4 of 5, now that the autograder grades with the student's key?"""
    folder = attacker(tmp_path / "submission", "exercises", timed_shapes(None))
    assert timed_shapes(None) != timed_shapes(keys.student_key(SECRET, "gradescope:77"))
    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text('{"users": [{"id": 77, "email": "mallory@example.edu"}]}')
    assert gradescope.run(folder.parent, tmp_path / "results.json", only("1.4", tmp_path / "course.toml"),
                          metadata) == 0
    result = json.loads((tmp_path / "results.json").read_text())
    assert [(t["number"], t["score"]) for t in result["tests"]] == [("1.4", 4)], result["tests"][0]["output"]


SECRET_SEARCHER = '''

def unbroadcast(grad, shape):
    """Looks for the course's secret in its environment and in every file it can open (its folders, the class
    folder, the checkout, /tmp, then all of /, for 6 s), and reports where it found it."""
    import os, time
    secret, skip = {backwards!r}[::-1], {skip!r}  # written backwards: this file must not hold it
    found, opened, stop = [name for name, value in os.environ.items() if secret in value], 0, time.monotonic() + 6.0
    tops = [os.getcwd(), os.path.dirname(os.path.abspath(__file__)), *{first!r}, "/tmp", "/"]
    for folder, dirs, files in (entry for top in tops for entry in os.walk(top)):
        if time.monotonic() > stop:
            break
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skip]
        for name in files:
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    text = f.read(1 << 16)
            except OSError:
                continue
            opened += 1
            if secret.encode() in text:
                found.append(os.path.join(folder, name))
    raise RuntimeError(f"opened {{opened}} files; found {{len(found)}}: " + " | ".join(found))
'''


@pytest.mark.xdist_group("hostile")
@pytest.mark.parametrize("isolation", ["bubblewrap", "limits"])
def test_a_worker_finds_the_course_secret_nowhere(tmp_path, isolation):
    """A submission whose unbroadcast looks for the course's secret in its environment and in every file it can
    open, graded with the course file beside its class folder and the secret in the judge's environment too: does
    it find it nowhere, under bubblewrap and under process limits (the test's world: tests/world.py)?"""
    import os
    import subprocess
    import sys

    import world
    from solution_scan import SYSTEM

    from graders import paths
    from graders.isolation import sandbox

    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap is not installed here (.ci/run installs it)")
    if isolation == "limits" and not world.works():
        pytest.skip("building the test's world takes root and mount namespaces")
    secret = "f0" * 32
    course = tmp_path / "course.toml"
    course_file.init(course)
    course.write_text(course.read_text().replace(course_file.load(course).secret, secret))
    mine = tmp_path / "class" / "searcher"
    make_submission(tmp_path / "class", "searcher", [])
    with open(mine / "tensor.py", "a") as f:
        f.write(SECRET_SEARCHER.format(backwards=secret[::-1], skip=SYSTEM, first=[str(tmp_path), str(paths.REPO)]))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-I", "-m", "graders", "grade", str(mine), "--tasks", "1.1",
                           "--course", str(course), "--isolation", isolation, "--results", str(out / "r.json")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(paths.REPO), course_file.SECRET_ENV: secret},
                          preexec_fn=world.preexec(world.needed(tmp_path)) if isolation == "limits" else None)
    assert done.returncode == 0, done.stderr[-2000:]
    message = json.loads((out / "r.json").read_text())["tests"][0]["output"]
    assert "found 0:" in message and int(message.split("opened ")[1].split()[0]) > 10, message
