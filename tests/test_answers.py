"""Each worker answer is parsed once, where it arrives, into its verb's type (graders.judge.checks.answers): a field
missing or of another type is the submission's failure ("came back incomplete or malformed"), never a KeyError or
TypeError that scores as the grader's own."""

from __future__ import annotations

import dataclasses
import types
import typing

import pytest

from graders.judge.checks import answers
from graders.judge.grade import ERROR, FAILED, grade
from graders.paths import SOLUTIONS
from graders.worker import main as worker_main

RECORDS = {verb: kind for verb, kind in answers.OF_VERB.items() if dataclasses.is_dataclass(kind)}


def test_every_verb_the_worker_answers_has_a_type_and_only_those():
    assert set(answers.OF_VERB) == set(worker_main.verbs())


def a_whole(kind) -> dict:
    """An answer of ``kind`` with every field present and of its type (the smallest such values)."""
    hints = typing.get_type_hints(kind)
    return {field.name: smallest(hints[field.name]) for field in dataclasses.fields(kind)}


def smallest(hint):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return smallest(next(a for a in args if a is not type(None)))
    if origin is list or hint is list:
        return []
    if origin is dict or hint is dict:
        return {}
    if dataclasses.is_dataclass(hint):
        return a_whole(hint)
    return {bool: True, int: 0, float: 0.0, str: "", object: None}[hint]


@pytest.mark.parametrize("verb", sorted(RECORDS))
def test_a_whole_answer_parses_into_its_type(verb):
    parsed = answers.parse(verb, a_whole(RECORDS[verb]))
    assert isinstance(parsed, RECORDS[verb])


@pytest.mark.parametrize("verb,name", [(verb, field.name) for verb, kind in sorted(RECORDS.items())
                                       for field in dataclasses.fields(kind)
                                       if field.default is dataclasses.MISSING
                                       and field.default_factory is dataclasses.MISSING])
def test_an_answer_without_a_field_it_must_have_is_malformed(verb, name):
    whole = a_whole(RECORDS[verb])
    del whole[name]
    with pytest.raises(answers.Malformed):
        answers.parse(verb, whole)


@pytest.mark.parametrize("verb,name", [(verb, field.name) for verb, kind in sorted(RECORDS.items())
                                       for field in dataclasses.fields(kind)
                                       if typing.get_type_hints(kind)[field.name] is not object])
def test_an_answer_with_a_field_of_another_type_is_malformed(verb, name):
    whole = a_whole(RECORDS[verb])
    whole[name] = object()  # what no JSON answer is: of no field's type
    with pytest.raises(answers.Malformed):
        answers.parse(verb, whole)


def test_booleans_are_not_counts_and_counts_are_not_booleans():
    whole = a_whole(answers.TrainEpoch)
    with pytest.raises(answers.Malformed):
        answers.parse("train_epoch_watched", {**whole, "steps": True})
    with pytest.raises(answers.Malformed):
        answers.parse("resume_from_pickle", {"survived": 0})


def test_a_scenario_is_what_it_returned_or_what_it_raised_never_both():
    parsed = answers.parse("engine_errors", {"a": {"returned": None}, "b": {"raised": {"type": "ValueError"}}})
    assert parsed["a"].did_return and parsed["a"].returned is None
    assert not parsed["b"].did_return and parsed["b"].raised == {"type": "ValueError"}
    for malformed in ({"a": {}}, {"a": {"returned": 1, "raised": {}}}, {"a": {"raised": "text"}}, {"a": 3}):
        with pytest.raises(answers.Malformed):
            answers.parse("engine_errors", malformed)


CHANGES_ANSWERS = """

import sys as _sys

_worker = _sys.modules.get("worker.main")
if _worker is not None:  # imported by the grader's worker: every later answer to this verb is changed
    _handler = _worker.VERBS[{verb!r}]

    def _changed(**request):
        answer = _handler(**request)
        answer.update({change})
        return answer

    _worker.VERBS[{verb!r}] = _changed
"""


@pytest.mark.slow
def test_an_answer_whose_fields_the_submission_retyped_is_its_failure_not_a_grader_error(tmp_path):
    """A submission that swaps the worker's handlers for ones answering with a field of the wrong type (a count
    that is a string, gradients that are a number, a loss that is a list): each task fails saying the answer came
    back malformed, and none reads as the grader's own failure."""
    import shutil

    folder = tmp_path / "retypes"
    shutil.copytree(SOLUTIONS, folder)
    for file, verb, change in (("tensor.py", "graph", '{"grads": 5}'),
                               ("train.py", "train_epoch_watched", '{"steps": "many"}'),
                               ("optim.py", "optimizer_run", '{"in_place": 1}')):
        with open(folder / file, "a") as f:
            f.write(CHANGES_ANSWERS.format(verb=verb, change=change))
    report = grade(folder, task_ids=("2.1", "3.1", "5.1"))
    by_id = {r.task.id: r for r in report.results}
    assert {task: r.status for task, r in by_id.items()} == dict.fromkeys(("2.1", "3.1", "5.1"), FAILED), \
        "\n".join(r.message for r in report.results)
    assert all("came back incomplete or malformed" in r.message for r in report.results)
    assert not any(r.status == ERROR for r in report.results)
