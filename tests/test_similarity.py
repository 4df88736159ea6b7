"""Does the class report's list of similar submissions hold copies, and only copies (graders/classgrade/similarity.py)?

The class: the reference solution, each correct style of tests/corpus_correct/ (its own modules; its other modules the
stubs), a copy of the reference with every name of its own changed and its comments dropped, and a student who
handed in the stubs. Only the copy and the reference are a pair; no two correct solutions are, and the stubs share
nothing but the given code. The report shows the pair's fractions and each side of the shared code, escaped.
"""

from __future__ import annotations

import ast
import builtins
import json
from pathlib import Path

import pytest

from graders.classgrade import batch, gradebook, report, similarity
from graders.classgrade.gradebook import Record
from graders.paths import EXERCISES, SOLUTIONS
from graders.tasks import GRADED_MODULES

CORRECT = Path(__file__).resolve().parent / "corpus_correct"
STYLES = sorted(p.name for p in CORRECT.iterdir() if (p / "STYLE.txt").is_file())


class Renamer(ast.NodeTransformer):
    """Every name a module binds itself (its functions, classes, arguments and variables, never a builtin or an
    import) given another: what a student who copied and disguised the code would do."""

    def __init__(self, tree: ast.AST):
        imported = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        bound = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
        keep = imported | set(dir(builtins)) | {"self", "cls"}
        self.names = {name: f"renamed_{i}" for i, name in enumerate(sorted(bound - keep))}

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)

    def visit_ClassDef(self, node):
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)


def renamed(text: str) -> str:
    """``text`` with every name of its own changed, reformatted and without its comments (ast.unparse)."""
    tree = ast.parse(text)
    return ast.unparse(Renamer(tree).visit(tree)) + "\n"


def stubs() -> dict[str, str]:
    return {module: (EXERCISES / f"{module}.py").read_text() for module in GRADED_MODULES}


def corpus_class() -> dict[str, dict[str, str]]:
    """student -> module -> text: the reference, each correct style, a renamed copy of the reference, the stubs."""
    reference = {module: (SOLUTIONS / f"{module}.py").read_text() for module in GRADED_MODULES}
    code = {"reference": reference, "renamed-copy": {m: renamed(t) for m, t in reference.items()},
            "stubs": stubs()}
    for style in STYLES:
        code[f"style-{style}"] = {**stubs(), **{path.stem: path.read_text() for path in (CORRECT / style).glob("*.py")}}
    return code


@pytest.fixture(scope="module")
def pairs() -> list[similarity.Pair]:
    return similarity.similar_pairs(corpus_class())


def reference_based(style: str) -> bool:
    """A style that is the reference's code but for one part, as its STYLE.txt says ("The rest is the
    reference's"): a copy of the reference by the detector's lights, written so on purpose."""
    return "the rest is the reference's" in " ".join((CORRECT / style / "STYLE.txt").read_text().lower().split())


def test_the_renamed_copy_is_flagged_and_no_two_correct_solutions_are(pairs):
    """Is the reference and its renamed copy a pair, with most of each one's own code shared, and are the correct
    styles written apart never a pair, with each other or with the reference? (A style that says it is the
    reference's code but for one part is a pair with the reference, and may be with its copy: it is that code.)"""
    print("\n".join(f"{p.first} · {p.second}: {p.fractions[0]:.0%} · {p.fractions[1]:.0%}" for p in pairs))
    based = [f"style-{style}" for style in STYLES if reference_based(style)]
    found = {(p.first, p.second) for p in pairs}
    must = {("reference", "renamed-copy")} | {("reference", style) for style in based}
    may = {("renamed-copy", style) for style in based}  # as much of the copy as the part the style kept
    assert must <= found <= must | may, found
    copy = next(p for p in pairs if (p.first, p.second) == ("reference", "renamed-copy"))
    assert min(copy.fractions) > 0.7
    assert {m.module for m in copy.files} == set(GRADED_MODULES)


def test_the_correct_styles_share_little_of_their_own_code():
    """How much of each correct style's own tensor.py (beyond the given code) another style's or the reference's
    holds: well under the threshold, so the threshold is not a hair's breadth from flagging honest work."""
    code = corpus_class()
    for student in ["renamed-copy", *(f"style-{style}" for style in STYLES if reference_based(style))]:
        del code[student]
    table = similarity.fractions(code)
    print("\n".join(f"{a} · {b}: {fa:.0%} · {fb:.0%}" for (a, b), (fa, fb) in sorted(table.items())))
    assert max(max(f) for f in table.values()) < similarity.FLAGGED - 0.1


def test_the_stubs_share_nothing_beyond_the_given_code():
    """A student who handed in the stubs has no code of their own: is every fraction with them 0?"""
    table = similarity.fractions({"stubs": stubs(), "also-stubs": stubs(),
                                  "reference": {m: (SOLUTIONS / f"{m}.py").read_text() for m in GRADED_MODULES}})
    assert table[("also-stubs", "stubs")] == (0.0, 0.0)
    assert table[("reference", "stubs")][1] == 0.0


def test_the_report_shows_the_pair_side_by_side_with_the_code_escaped(tmp_path):
    """A class whose copy carries markup in a string and a comment: does class.html list the pair with its
    fractions, show both sides with the shared passages marked, and escape every line of code; does class.md show
    both passages in code blocks whose fences no line of the code closes?"""
    reference = (SOLUTIONS / "tensor.py").read_text()
    lines = renamed(reference).splitlines()
    # Inside the second function's body: copied code, near the top, so the side-by-side view shows it.
    inside = [i for i, line in enumerate(lines) if line.startswith("def ")][1] + 3
    copy = "\n".join([*lines[:inside], "    # </pre><script>alert(1)</script> ````` not a fence", *lines[inside:]])
    out = tmp_path / "out"
    records = []
    for student, text in (("ana", reference), ("<b>bo</b>", copy)):
        folder = out / gradebook.STUDENTS / student
        for module in GRADED_MODULES:
            gradebook.atomic_write(folder / gradebook.CODE / f"{module}.py",
                                   text if module == "tensor" else (EXERCISES / f"{module}.py").read_text())
        records.append(Record(student, "graded", 0.0, {}, 1.0))
    data = report.build(out, records, ("1.1",))
    assert [(p.first, p.second) for p in data.pairs] == [("<b>bo</b>", "ana")]
    page = report.page(data, {})
    assert "<script>" not in page and "<b>bo</b>" not in page and "&lt;b&gt;bo&lt;/b&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;" in page and page.count("<mark>") >= 2
    assert 'href="#pair-1"' in page and 'id="pair-1"' in page
    text = report.markdown(data)
    section = text.split("## " + report.msg.CLASS_SIMILAR_TITLE, 1)[1]
    assert "\\<b\\>bo\\</b\\>" in section and "<b>" not in section
    block = section.split("``````python\n", 1)[1].split("\n``````\n", 1)[0]  # longer than the code's ````` run
    assert "    # </pre><script>alert(1)</script> ````` not a fence" in block


def test_grade_all_keeps_the_graded_code_and_merge_carries_it(tmp_path):
    """The code the similarity report compares comes from OUT_DIR/students/<student>/code/: does it hold exactly the
    graded modules, and does merge carry it (and nothing else a shard's code/ holds)?"""
    from corpus import make_submission

    subs = tmp_path / "subs"
    make_submission(subs, "ana", [])
    (subs / "ana" / "notes.py").write_text("print('not graded')\n")
    folder = tmp_path / "out" / gradebook.STUDENTS / "ana"
    batch.keep_code(batch.intake.Submission("ana", subs / "ana"), folder)
    assert sorted(p.name for p in (folder / gradebook.CODE).iterdir()) == sorted(f"{m}.py" for m in GRADED_MODULES)
    record = Record("ana", "graded", 4.0, {"1.1": 4.0}, 1.0, isolation="bubblewrap")
    gradebook.save_record(folder, record)
    gradebook.write_csv(tmp_path / "out" / gradebook.CSV_NAME, [record], ("1.1",))
    (folder / gradebook.CODE / "evil.sh").write_text("rm -rf /\n")
    gradebook.merge([tmp_path / "out"], tmp_path / "merged")
    kept = tmp_path / "merged" / gradebook.STUDENTS / "ana" / gradebook.CODE
    assert sorted(p.name for p in kept.iterdir()) == sorted(f"{m}.py" for m in GRADED_MODULES)
    assert json.loads((tmp_path / "merged" / gradebook.STUDENTS / "ana" / "grading.json").read_text())["total"] == 4.0


def test_a_class_compared_again_unchanged_is_read_from_the_cache(tmp_path, monkeypatch):
    """grade-all writes the report on every run: is an unchanged class's list read back from OUT_DIR's cache (no
    comparison at all), the same pairs and passages, and is a class whose code changed compared again?"""
    reference = {m: (SOLUTIONS / f"{m}.py").read_text() for m in GRADED_MODULES}
    code = {"ana": reference, "bo": {m: renamed(t) for m, t in reference.items()}, "cy": stubs()}
    cache = tmp_path / ".similarity.json"
    first = similarity.similar_pairs(code, cache=cache)
    assert [(p.first, p.second) for p in first] == [("ana", "bo")]

    def compared(_code):
        raise AssertionError("compared again")

    monkeypatch.setattr(similarity, "compare", compared)
    again = similarity.similar_pairs(code, cache=cache)
    assert [(p.first, p.second, p.fractions) for p in again] == [(p.first, p.second, p.fractions) for p in first]
    assert [f.sides() for f in again[0].files] == [f.sides() for f in first[0].files]
    code["cy"] = dict(reference)
    with pytest.raises(AssertionError, match="compared again"):
        similarity.similar_pairs(code, cache=cache)
