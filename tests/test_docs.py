"""The docs: README.md is a front door, docs/ is a site mkdocs builds strictly, and every command they show is
one the package really has."""

from __future__ import annotations

import csv
import difflib
import importlib.util
import itertools
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from graders import cli, messages
from graders.course import course_file
from graders.tasks import BY_ID, TASKS, TOTAL_POINTS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
README = REPO / "README.md"
README_MAX_LINES = 250
PAGES = (README, *sorted(DOCS.glob("*.md")))
SHELLS = ("", "console", "shell", "sh", "bash")  # fenced blocks whose lines are commands (or a session)
COMMANDS = ("autograd-lab ", "python -I -m graders ")
WORDS_OF_A_MARKER_EXPRESSION = {"and", "or", "not"}


def test_the_readme_is_a_front_door_of_at_most_250_lines():
    """Is README.md at most 250 lines, the rest of the documentation living in docs/?"""
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, more than {README_MAX_LINES}: move text to docs/"


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists, in order (``- Title: page.md`` lines below ``nav:``)."""
    config = (REPO / "mkdocs.yml").read_text()
    nav = config.split("\nnav:\n", 1)[1]
    return re.findall(r"^\s+-\s+(?:[^:\n]+:\s+)?(\S+\.md)\s*$", nav, flags=re.M)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    """Does mkdocs.yml's nav list each page of docs/ exactly once, and name no page that is missing?"""
    listed = nav_pages()
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(listed)) == sorted(listed), f"a page listed twice in the nav: {listed}"
    assert sorted(listed) == pages, (f"in docs/ but not in the nav: {sorted(set(pages) - set(listed))}; "
                                     f"in the nav but not in docs/: {sorted(set(listed) - set(pages))}")


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs or mkdocs-material is not installed (both are in the dev extra)")
def test_mkdocs_builds_the_docs_strictly(tmp_path):
    """Does `mkdocs build --strict` build the site with no warning (every link between pages and every anchor
    resolving)?"""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                             str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (Python-Markdown's toc slugify)."""
    text = unicodedata.normalize("NFKD", heading.replace("`", "")).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def test_the_readmes_links_lead_to_files_and_headings_that_exist():
    """Does every relative link of README.md (which mkdocs does not check) name a file of the repository, and a
    heading of that page where it gives an anchor?"""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", README.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = REPO / path
        if not file.exists():
            broken.append(target)
        elif anchor and anchor not in {slug(h) for h in re.findall(r"^#+ (.+)$", file.read_text(), flags=re.M)}:
            broken.append(target)
    assert not broken, f"README.md links to what does not exist: {broken}"


FENCED = re.compile(r"^ *```(\w*)\n(.*?)^ *```", flags=re.M | re.S)


def inline_code(text: str) -> list[str]:
    """The inline code spans of a page, outside its fenced blocks, each on one line."""
    return [span.replace("\n", " ") for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", FENCED.sub("", text))]


def shown_commands(text: str) -> list[str]:
    """The shell command lines of a page: in each fenced shell block, the lines after a `$ ` prompt where the block
    has one (the rest is output), else every line; and every inline code span. Continued lines are joined."""
    commands = []
    for lang, body in FENCED.findall(text):
        if lang not in SHELLS:
            continue
        lines = [line.strip() for line in body.replace("\\\n", " ").splitlines()]
        prompted = [line[2:] for line in lines if line.startswith("$ ")]
        commands += prompted if prompted else lines
    return commands + inline_code(text)


def words_of(command: str) -> list[str]:
    """A shell line's words, its trailing comment left out."""
    return shlex.split(command, comments=True)


def subcommands() -> dict[str, object]:
    """The `autograd-lab` subcommands' parsers, by name, from the command line's own parser."""
    parser = cli.parser()
    (sub,) = [action for action in parser._actions if action.choices and action.dest == "command"]
    return dict(sub.choices)


def command_problems(command: str, parsers: dict) -> list[str]:
    """What is wrong with one shown `autograd-lab` command: an unknown subcommand, an option its parser does not
    take, or a value outside an option's choices."""
    head = next(prefix for prefix in COMMANDS if command.startswith(prefix))
    try:
        words = words_of(command[len(head):])
    except ValueError as error:
        return [f"{command!r}: not a shell command ({error})"]
    if not words or words[0].startswith("-"):
        return []  # autograd-lab --version, --help
    name, rest = words[0], words[1:]
    if name not in parsers:
        return [f"{command!r}: no subcommand {name!r} (there are {', '.join(sorted(parsers))})"]
    options = {option: action for action in parsers[name]._actions for option in action.option_strings}
    problems = []
    for i, word in enumerate(rest):
        for option in re.findall(r"(?<![\w-])--?[a-z][a-z0-9-]*", word):
            if option not in options:
                problems.append(f"{command!r}: `autograd-lab {name}` takes no option {option}")
                continue
            value = rest[i + 1] if i + 1 < len(rest) and word == option else None
            choices = options[option].choices
            if choices and value is not None and re.fullmatch(r"[a-z]+", value) and value not in choices:
                problems.append(f"{command!r}: {option} {value}: expected one of {sorted(choices)}")
    return problems


def pytest_markers(ini_text: str) -> set[str]:
    """The marker names declared in a pytest.ini's `markers =` or pyproject's `markers = [...]`: the indented
    lines that follow it."""
    block = []
    for line in ini_text.split("markers =", 1)[1].splitlines()[1:]:
        if line.strip() and not line[0].isspace():
            break
        block.append(line)
    return set(re.findall(r"^\s+\"?([a-z][a-z0-9_]*):", "\n".join(block), flags=re.M))


def test_every_autograd_lab_command_in_the_docs_is_real():
    """Does every `autograd-lab` command that README.md or a page of docs/ shows name a subcommand that exists, and
    only options (and choices) that subcommand's parser accepts?"""
    parsers = subcommands()
    problems, seen = [], 0
    for page in PAGES:
        for command in shown_commands(page.read_text()):
            if command.startswith(COMMANDS):
                seen += 1
                problems += [f"{page.relative_to(REPO)}: {p}" for p in command_problems(command, parsers)]
    assert seen > 20, f"only {seen} commands found: has the docs' layout changed?"
    assert not problems, "\n".join(problems)


def test_every_pytest_marker_in_the_docs_exists():
    """Does every `pytest ... -m EXPRESSION` that README.md or a page of docs/ shows name only markers that exist:
    task markers declared in exercises/pytest.ini, the package's own in pyproject.toml?"""
    tasks = pytest_markers((REPO / "exercises" / "pytest.ini").read_text())
    ours = pytest_markers((REPO / "pyproject.toml").read_text().split("[tool.pytest.ini_options]", 1)[1])
    assert "task1_4" in tasks and "nbgrader" in ours
    problems, seen = [], 0
    for page in PAGES:
        for command in shown_commands(page.read_text()):
            if "pytest" not in command:
                continue
            try:
                words = words_of(command)
            except ValueError as error:
                problems.append(f"{page.relative_to(REPO)}: {command!r}: not a shell command ({error})")
                continue
            if "pytest" not in words:
                continue
            after = words[words.index("pytest") + 1:]
            for i, word in enumerate(after[:-1]):
                if word != "-m":
                    continue
                seen += 1
                for marker in set(re.findall(r"\w+", after[i + 1])) - WORDS_OF_A_MARKER_EXPRESSION:
                    known = tasks if marker.startswith("task") else ours
                    if marker not in known:
                        problems.append(f"{page.relative_to(REPO)}: {command!r}: no marker {marker!r}")
    assert seen >= 4, f"only {seen} `pytest -m` commands found: has the docs' layout changed?"
    assert not problems, "\n".join(problems)


def test_the_files_the_docs_name_exist():
    """Does every file of the repository that README.md or a page of docs/ names in code (graders/..., tests/...,
    .ci/...) exist, so the docs follow the code when it moves?"""
    missing = []
    for page in PAGES:
        for span in inline_code(page.read_text()):
            if re.fullmatch(r"(graders|tests|exercises|solutions|\.ci)/[\w./-]*[\w]", span) and "<" not in span:
                if not (REPO / span).exists():
                    missing.append(f"{page.relative_to(REPO)}: {span}")
    assert not missing, "named in the docs, missing from the repository:\n" + "\n".join(missing)


def test_the_development_page_gives_the_readmes_two_setup_commands():
    """Does docs/development.md give the very set-up commands the README gives (and CI runs)?"""
    def setup(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("python -m pip install")]

    readme = setup(README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0])
    assert readme and setup((DOCS / "development.md").read_text()) == readme


def test_ci_builds_the_docs_strictly_outside_the_clone():
    """Does .ci/run build the docs with `mkdocs build --strict` (never --quiet, which stops strict mode counting
    warnings in mkdocs 1.6) into a folder outside the clone, removed after, right after the exercises' sync check?"""
    lines = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    docs = [i for i, line in enumerate(lines) if "mkdocs build" in line]
    assert len(docs) == 1, f"one mkdocs build in .ci/run, found {len(docs)}"
    line = lines[docs[0]]
    assert "--strict" in line and "--quiet" not in line and " -q" not in line
    assert line.startswith("site=$(mktemp -d) && ") and '--site-dir "$site"' in line and line.endswith('rm -rf "$site"')
    assert lines[docs[0] - 1] == "autograd-lab build-exercises --check"


def test_the_dev_extra_brings_mkdocs_and_ci_pins_it():
    """Does the dev extra bring mkdocs and the Material theme, and do CI's constraints pin both?"""
    pyproject = (REPO / "pyproject.toml").read_text()
    dev = re.search(r"^dev = \[(.*?)\]", pyproject, flags=re.M | re.S).group(1)
    assert '"mkdocs==1.6.1"' in dev and '"mkdocs-material' in dev
    constraints = (REPO / ".ci" / "constraints.txt").read_text()
    assert re.search(r"^mkdocs==1\.6\.1$", constraints, flags=re.M)
    assert re.search(r"^mkdocs-material==[\d.]+$", constraints, flags=re.M)


# ----- the repository stands alone: no text of it cites a file outside it -----

# A folder outside the repository that notes and guidance once lived in: "../" or "/work/" then "shared".
OUTSIDE_FOLDER = re.compile(r"(?:\.\./|/work/)shared\b")
# A page of design notes named bare (or with a path): it must be a file of the repository, resolved from the
# citing file's folder or the repository's root (mkdocs.yml's nav: from docs/).
CITED_PAGE = re.compile(r"(?<![\w.-])((?:[\w.-]+/)*)((?:contract|design|style)\.md)\b")


def tracked_text_files() -> list[Path]:
    """Every file of the checkout that git tracks, or would (untracked but not ignored), and that is text; where
    git or the checkout's .git is missing (an unpacked sdist), every file below the root but the usual clutter."""
    try:
        command = ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        listed = subprocess.run(command, capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
        files = [REPO / name for name in listed if name]
    except (OSError, subprocess.SubprocessError):
        clutter = {".git", "__pycache__", "site", "build", "dist", ".tox", ".pytest_cache", ".hypothesis"}
        files = [p for p in REPO.rglob("*") if not clutter & set(p.relative_to(REPO).parts)
                 and not any(part.startswith(".venv") or part.endswith(".egg-info") for part in p.parts)]
    texts = []
    for path in files:
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        texts.append(path)
    return texts


def outside_citations(path: Path, text: str) -> list[str]:
    """What ``text`` (the file at ``path``) cites outside the repository: a folder outside it, or a design page
    that is no file of it."""
    found = [f"{match.group(0)!r}" for match in OUTSIDE_FOLDER.finditer(text)]
    bases = [path.parent, REPO] + ([REPO / "docs"] if path == REPO / "mkdocs.yml" else [])
    for match in CITED_PAGE.finditer(text):
        cited = match.group(1) + match.group(2)
        if not any((base / cited).resolve().is_relative_to(REPO) and (base / cited).is_file() for base in bases):
            found.append(f"{cited!r}, which is no file of the repository")
    return found


# Citations inside a sentence a grade prints, not in a comment or a docstring: changing one changes graders' output,
# so it moves with the sentence into graders/messages/, not here. Each entry must still be
# found, so that the entry goes when the sentence does.
IN_GRADERS_OUTPUT = {
    ("graders/messages/checks.py", "\"autodiff library (" + "contract" + ".md)\""),
}


def test_no_file_of_the_repository_cites_a_file_outside_it():
    """Does every text file of the repository (code, docstrings, docs, configuration) cite only files of the
    repository: no folder outside it, and no design page by a bare name that is no file of it (docs/contract.md
    and docs/design.md are)?"""
    files = tracked_text_files()
    found = len(files) > 100 and REPO / "graders" / "messages" / "__init__.py" in files
    assert found, f"only {len(files)} text files found"
    problems, printed = [], set()
    for path in files:
        name = path.relative_to(REPO).as_posix()
        for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            known = {(file, phrase) for file, phrase in IN_GRADERS_OUTPUT if file == name and phrase in line}
            if known:
                printed |= known
                continue
            problems += [f"{name}:{line_number}: {c}" for c in outside_citations(path, line)]
    assert not problems, "cited outside the repository:\n" + "\n".join(problems)
    assert printed == IN_GRADERS_OUTPUT, f"gone from the code, so take them off: {IN_GRADERS_OUTPUT - printed}"


def test_the_outside_citation_finder_finds_what_it_must():
    """Does the finder flag a folder outside the repository and a bare design page, and pass the repository's own
    pages, relative from docs/ or from the root?"""
    code = REPO / "graders" / "tasks.py"
    assert outside_citations(code, "see " + "../" + "shared/notes") and outside_citations(code, "/work/" + "shared")
    assert outside_citations(code, "(" + "contract" + ".md)") and outside_citations(code, "style" + ".md, item 6")
    assert outside_citations(code, "graders/" + "design" + ".md")
    assert not outside_citations(code, "docs/" + "contract" + ".md and docs/" + "design" + ".md#scale")
    assert not outside_citations(DOCS / "index.md", "[Design](" + "design" + ".md)")
    assert not outside_citations(REPO / "mkdocs.yml", "  - Design: " + "design" + ".md")
    assert not outside_citations(code, "shared/ folders, a shared_key and docs/contract" + ".md")


# ----- the samples the docs show are the code's own output -----

SNAPSHOTS = REPO / "tests" / "snapshots"
HEADS = {f"Task {task.id} ({task.title}): ": task for task in TASKS}
ELIDED = "..."
STATUSES = "passed|failed|skipped|not attempted|grader error"
ROW = re.compile(rf"^(\d+\.\d+)  +(\S.*?)  +(\d+)/(\d+)  +({STATUSES})(?:  +(.*))?$")
TOTAL_LINE = re.compile(r"^total (\d+)/(\d+) \(([\d,]+) Hypothesis examples, [\d.]+ s\)$")
# Where the grading machine has CUDA, an expected value's source says "CPU and CUDA agree" (tests/test_corpus_wrong).
MACHINE_DEPENDENT = (" and CUDA agree",)
# Task 1.4's hint for a gradient of the reversed shape, the one the docs once misquoted.
MATMUL_SWAPPED = "matmul_grads_swapped__1.4.txt"


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced block of a page, right-stripped."""
    return [[line.rstrip() for line in body.splitlines()] for _, body in FENCED.findall(text)]


def message_head(line: str):
    """The task a failure message's first line is about (`Task 1.4 (backward of @): ...`), else None."""
    return next((task for head, task in HEADS.items() if line.startswith(head)), None)


def quoted_messages(block: list[str]) -> list[list[str]]:
    """The failure messages a fenced block quotes: a `Task X.Y (title): ...` line and the indented lines under it
    (`  ...` stands for lines left out)."""
    messages = []
    for i, line in enumerate(block):
        if message_head(line) is not None:
            body = list(itertools.takewhile(lambda follow: follow.startswith("  "), block[i + 1:]))
            messages.append([line, *body])
    return messages


def snapshots_of(task_id: str) -> dict[str, list[str]]:
    """The pinned messages of a task (tests/snapshots/<entry>__<task>.txt), by file name, as lines."""
    return {path.name: path.read_text().rstrip("\n").splitlines() for path in SNAPSHOTS.glob(f"*__{task_id}.txt")}


def is_excerpt(quoted: list[str], whole: list[str]) -> bool:
    """Is ``quoted`` the lines of ``whole`` in order, where `  ...` lines stand for any lines left out?"""
    rest = iter(whole)
    return all(line.strip() == ELIDED or line in rest for line in quoted)


def strings_of(value) -> set[str]:
    """Every string a value of graders.messages holds: itself, or those of a dict's values or a tuple's items."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*map(strings_of, value.values()))
    if isinstance(value, (tuple, list)):
        return set().union(*map(strings_of, value))
    return set()


def test_every_failure_message_the_docs_quote_is_the_pinned_one():
    """Is every failure message that README.md or a page of docs/ quotes, whose first line is that of a message
    pinned in tests/snapshots/, that pinned message (whole, or an excerpt where `  ...` marks lines left out)? And
    does every other quoted message end with a hint graders/messages/ holds?"""
    hints = {text for value in vars(messages).values() for text in strings_of(value)}
    problems, pinned = [], []
    for page in PAGES:
        for block in fenced_blocks(page.read_text()):
            for quoted in quoted_messages(block):
                where = f"{page.relative_to(REPO)}: {quoted[0]!r}"
                task = message_head(quoted[0])
                same_head = {name: lines for name, lines in snapshots_of(task.id).items() if lines[0] == quoted[0]}
                if same_head:
                    pinned.append((page.name, *same_head))
                    if not any(is_excerpt(quoted, lines) if any(line.strip() == ELIDED for line in quoted)
                               else quoted == lines for lines in same_head.values()):
                        problems.append(f"{where}: differs from {', '.join(same_head)}:\n" + "\n".join(quoted))
                    continue
                for line in quoted:
                    if line.startswith("  hint: ") and line[len("  hint: "):] not in hints:
                        problems.append(f"{where}: its hint is none of graders/messages/'s: {line!r}")
    assert not problems, "\n".join(problems)
    assert ("README.md", MATMUL_SWAPPED) in pinned and ("grading.md", MATMUL_SWAPPED) in pinned, pinned


def test_every_scorecard_row_the_docs_show_matches_the_task_table_and_its_message():
    """Does every scorecard row that README.md or a page of docs/ shows give its task's title and points as
    graders/tasks.py has them, a reason that begins the message the same block quotes for that task, and, where
    the block shows every task, a total that is the sum of its rows?"""
    problems, rows_seen = [], 0
    for page in PAGES:
        for block in fenced_blocks(page.read_text()):
            heads = {message_head(quoted[0]).id: quoted[0] for quoted in quoted_messages(block)}
            rows = [match for line in block if (match := ROW.match(line))]
            rows_seen += len(rows)
            where = page.relative_to(REPO)
            for task_id, title, score, points, _status, reason in (row.groups() for row in rows):
                task = BY_ID.get(task_id)
                if task is None or (title, int(points)) != (task.title, task.points) or int(score) > int(points):
                    problems.append(f"{where}: row {task_id} {title!r} {score}/{points}: not the task table's")
                elif task_id in heads and reason:
                    said = heads[task_id][len(f"Task {task.id} ({task.title}): "):]
                    if not said.startswith(reason.rstrip("…")):
                        problems.append(f"{where}: row {task_id}'s reason {reason!r} does not begin {said!r}")
            totals = [match for line in block if (match := TOTAL_LINE.match(line))]
            if len(rows) == len(TASKS) and totals:
                (total,) = totals
                got = (int(total[1]), int(total[2]))
                expected = (sum(int(row[3]) for row in rows), TOTAL_POINTS)
                if got != expected:
                    problems.append(f"{where}: total {got[0]}/{got[1]}, the rows make {expected[0]}/{expected[1]}")
    assert rows_seen >= len(TASKS) + 3, f"only {rows_seen} scorecard rows found: has the scorecard's layout changed?"
    assert not problems, "\n".join(problems)


def test_the_contract_lists_every_task_with_its_title_file_and_points():
    """Does docs/contract.md's table of tasks give each task of graders/tasks.py, in order, with its title, file
    and points?"""
    text = (REPO / "docs/contract.md").read_text().split("\n## The tasks\n", 1)[1]
    rows = re.findall(r"^\| (\d+\.\d+) \| (.+?) \| (\w+)\.py \| (\d+) \|$", text, flags=re.M)
    assert rows == [(task.id, task.title, task.module, str(task.points)) for task in TASKS]


# The submission of grading.md's sample run (README.md shows an excerpt of it): three mistakes of the corpus.
SAMPLE_MISTAKES = ("matmul_grads_swapped", "square_mean_forgets_n")
SAMPLE_LOOP_MISTAKE = ("train.py", "    optimizer.step()\n    optimizer.zero_grad()\n", "    optimizer.step()\n")


def sample_scorecards() -> list[tuple[str, list[str]]]:
    """The fenced blocks of README.md and docs/grading.md that show the sample run's scorecard (its total line)."""
    found = []
    for page in (README, DOCS / "grading.md"):
        blocks = [b for b in fenced_blocks(page.read_text()) if any(TOTAL_LINE.match(line) for line in b)]
        assert len(blocks) == 1, f"{page.name}: {len(blocks)} blocks with a scorecard's total, expected 1"
        found.append((page.name, blocks[0]))
    return found


def masked(line: str) -> str:
    """A line of `grade`'s output less what differs between machines and runs: the seconds, CUDA's witness."""
    for phrase in MACHINE_DEPENDENT:
        line = line.replace(phrase, "")
    return re.sub(r", [\d.]+ s\)$", ", N s)", line.rstrip())


UPDATE_SAMPLES = os.environ.get("AUTOGRAD_LAB_UPDATE_DOCS") == "1"


def refreshed(block: list[str], printed: list[str]) -> list[str]:
    """A sample's fenced block rewritten from what `grade` printed: each run of its lines between elisions becomes the
    printed lines from the one its first line is to the one its last line is (the same line but for the seconds, or
    else the line that begins as it does: a task's row, the total, "Task 1.4" of a message's head), so rows the
    table gained appear inside a run; the prompt, the header and the elisions stay."""
    def start(line: str) -> str:
        words = line.split()
        return " ".join(words[:2] if words[:1] == ["Task"] else words[:1])

    def find(line: str, after: int) -> int | None:
        for same in (lambda other: masked(other) == masked(line), lambda other: start(other) == start(line)):
            found = next((i for i in range(after, len(printed)) if same(printed[i])), None)
            if found is not None:
                return found
        return None

    out, position = [line for line in block if line.startswith(("$ ", "autograd-lab "))], 1
    body = [line for line in block if not line.startswith(("$ ", "autograd-lab "))]
    for elided, group in itertools.groupby(body, key=lambda line: line == ELIDED):
        chunk = list(group)
        first = None if elided else find(chunk[0], position)
        last = None if first is None else find(chunk[-1], first)
        if last is None:
            out += chunk
            continue
        out += printed[first:last + 1]
        position = last + 1
    return out


def rewrite_samples(printed: list[str]) -> None:
    """Rewrite the sample scorecards of README.md and grading.md from ``printed`` (``AUTOGRAD_LAB_UPDATE_DOCS=1``:
    after a change of the task table, such as a task added)."""
    for page in (README, DOCS / "grading.md"):
        text = page.read_text()
        for _, body in FENCED.findall(text):
            block = [line.rstrip() for line in body.splitlines()]
            if any(TOTAL_LINE.match(line) for line in block):
                text = text.replace(body, "\n".join(refreshed(block, printed)) + "\n", 1)
        page.write_text(text)


def test_a_sample_is_refreshed_line_by_line():
    """Does ``refreshed`` take each run of a sample's lines from the printed lines between its first and its last (a
    row the table gained appears inside it), keeping the elisions, the prompt and the header?"""
    printed = ["autograd-lab 9", "task  title", "1.1   unbroadcast   4/4", "1.9   softplus   3/3", "total 7/7 (5 s)",
               "", "Task 1.1 (unbroadcast): wrong", "  hint: one", "", "Task 1.9 (softplus): wrong", "  hint: two"]
    assert refreshed(["$ grade", "autograd-lab 1", "task  title", "total 4/4 (1 s)", "", "Task 1.9 (x): wrong"],
                     printed) == ["$ grade", "autograd-lab 1", *printed[1:10]]
    assert refreshed(["1.1   unbroadcast   4/4", ELIDED, "total 4/4 (1 s)", ELIDED, "  hint: two"], printed) == [
        "1.1   unbroadcast   4/4", ELIDED, "total 7/7 (5 s)", ELIDED, "  hint: two"]


@pytest.mark.slow
def test_the_sample_scorecard_is_a_real_grade_of_its_submission(tmp_path, capsys):
    """Is the scorecard grading.md shows (and README.md's excerpt of it) what `autograd-lab grade` prints for the
    submission it describes, line for line but for the versions and the seconds? ``AUTOGRAD_LAB_UPDATE_DOCS=1``
    rewrites both from the grade."""
    from corpus import BY_NAME, make_submission

    alice = make_submission(tmp_path, "alice", [*(BY_NAME[name] for name in SAMPLE_MISTAKES), SAMPLE_LOOP_MISTAKE])
    capsys.readouterr()
    assert cli.main(["grade", str(alice)]) == 0
    output = capsys.readouterr().out.splitlines()
    if UPDATE_SAMPLES:
        rewrite_samples([line.rstrip() for line in output])
    printed = [masked(line) for line in output]
    assert printed[0].startswith("autograd-lab ")
    for page, block in sample_scorecards():
        shown = [masked(line) for line in block if not line.startswith(("$ ", "autograd-lab "))]
        chunks = [list(group) for elided, group in itertools.groupby(shown, key=lambda line: line == ELIDED)
                  if not elided]
        position = 0
        for chunk in chunks:
            starts = [i for i in range(position, len(printed) - len(chunk) + 1) if printed[i:i + len(chunk)] == chunk]
            assert starts, f"{page}: not what grade printed (from its line {position}):\n" + "\n".join(
                difflib.unified_diff(printed[position:position + len(chunk)], chunk, "printed", page, lineterm=""))
            position = starts[0] + len(chunk)


# ----- docs/class.md: the class of six -----

PROGRESS = re.compile(r"^grade-all: (\d+)/(\d+) \((\d+) unchanged, (\d+) not graded\) · [\d.]+/min · ETA \d+m\d\ds · "
                      r"(\S+): (.+)$")
CLASS_SUMMARY = re.compile(r"^grade-all: (\d+) graded, (\d+) unchanged since the last run \(--force regrades them\), "
                           r"(\d+) not graded, in \d+ s$")


def class_sample() -> tuple[list[str], list[list[str]]]:
    """docs/class.md's first run of grade-all (its fenced block's lines) and its grades.csv (as CSV rows)."""
    blocks = fenced_blocks((DOCS / "class.md").read_text())
    run = next(b for b in blocks if b and b[0] == "$ autograd-lab grade-all submissions --out out --jobs 2 --course "
               "course.toml")
    table = next(b for b in blocks if b and b[0].startswith("student,"))
    return run, list(csv.reader(table))


def rewrite_class_sample(printed: list[str], grades_csv: str) -> None:
    """Rewrite docs/class.md's first run from a run of its class (``AUTOGRAD_LAB_UPDATE_DOCS=1``: after a change of
    the task table, such as a task added): each progress line's status for its student, and grades.csv whole (that
    run's seconds). The rates, ETAs and the order the students finish in stay the page's."""
    page = DOCS / "class.md"
    text = page.read_text()
    status = {student: said for line in printed if (match := PROGRESS.match(line)) for student, said in
              [match.groups()[4:]]}
    run, _ = class_sample()
    for line in run:
        match = PROGRESS.match(line)
        if match and match[5] in status:
            text = text.replace(line, line[:match.start(6)] + status[match[5]], 1)
    table = next(body for _, body in FENCED.findall(text) if body.startswith("student,"))
    page.write_text(text.replace(table, grades_csv.replace("\r\n", "\n"), 1))


def without_seconds(rows: list[list[str]]) -> list[list[str]]:
    return [row[:-2] + row[-1:] for row in rows]  # seconds is the one before the last column, the isolation


def test_the_class_run_the_docs_show_adds_up():
    """Does docs/class.md's grades.csv have a column per task of graded/tasks.py, each graded row's points within
    its task's and summing to its total, and the isolation of a grade that counts, and do the run's progress lines
    and summary give every student the status and total of their row?"""
    run, rows = class_sample()
    assert rows[0] == ["student", *(task.id for task in TASKS), "total", "status", "seconds", "isolation"]
    by_student = {row[0]: row for row in rows[1:]}
    for row in by_student.values():
        points, total, status, isolation = row[1:-4], row[-4], row[-3], row[-1]
        assert isolation == ("bubblewrap" if status == "graded" else ""), row
        if status == "graded":
            assert all(0 <= int(p) <= task.points for p, task in zip(points, TASKS)), row
            assert sum(map(int, points)) == int(total), row
        else:
            assert points == [""] * len(TASKS) and total == "0", row
    progress = [match.groups() for line in run if (match := PROGRESS.match(line))]
    assert [int(done) for done, *_ in progress] == list(range(1, len(by_student) + 1))
    finished = {student: status for *_, student, status in progress}
    assert finished == {student: f"graded {row[-4]}" if row[-3] == "graded" else row[-3].split(":")[0]
                        for student, row in by_student.items()}
    (summary,) = [match.groups() for line in run if (match := CLASS_SUMMARY.match(line))]
    graded = sum(row[-3] == "graded" for row in by_student.values())
    assert summary == (str(graded), "0", str(len(by_student) - graded))


def autograd_lab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``autograd-lab ARGS`` as a user runs it (``python -I -m graders``), from ``cwd``."""
    result = subprocess.run([sys.executable, "-I", "-m", "graders", *args], cwd=cwd, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def shown_run(block: list[str], command: str) -> list[str]:
    """The lines a fenced block shows after the prompt ``$ command``, up to the next prompt."""
    start = block.index(f"$ {command}") + 1
    return list(itertools.takewhile(lambda line: not line.startswith("$ "), block[start:]))


def timeless(line: str) -> str:
    """A line of grade-all's output less its seconds."""
    return re.sub(r", in \d+ s$", ", in N s", line)


def of_the_class(lines: list[str]) -> list[str]:
    """The lines of a run that say something of the class: not the note that the machine was busy during the run,
    which depends on the machine's other load, never on the class."""
    busy = messages.BATCH_LOADED.split("{", 1)[0]
    return [line for line in lines if not line.startswith(busy)]


def finished(lines: list[str]) -> set[tuple[str, str]]:
    """(student, status) of each progress line: what does not depend on the order the students finish in."""
    return {match.groups()[4:] for line in lines if (match := PROGRESS.match(line))}


@pytest.mark.long
def test_the_class_run_the_docs_show_is_grade_alls_for_that_class(tmp_path):
    """Does `grade-all` of the class docs/class.md describes give what the page shows: every student's status and
    score, the summary, grades.csv but for its seconds, the second run that grades nothing, and the two shards and
    their merge? (The rates, ETAs, seconds and the order students finish in are one run's.)"""
    from test_batch import make_class

    make_class(tmp_path)
    (tmp_path / "course.toml").write_text(course_file.template("ab" * 32))  # `autograd-lab course init course.toml`
    blocks = fenced_blocks((DOCS / "class.md").read_text())
    run, rows = class_sample()
    first = autograd_lab("grade-all", "submissions", "--out", "out", "--jobs", "2", "--course", "course.toml",
                         cwd=tmp_path)
    printed = of_the_class(first.stderr.splitlines() + first.stdout.splitlines())
    if UPDATE_SAMPLES:
        rewrite_class_sample(printed, (tmp_path / "out" / "grades.csv").read_text())
        blocks = fenced_blocks((DOCS / "class.md").read_text())
        run, rows = class_sample()
    assert finished(printed) == finished(run[1:])
    assert {timeless(line) for line in printed if not PROGRESS.match(line)} == \
        {timeless(line) for line in run[1:] if not PROGRESS.match(line)}
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        assert without_seconds(list(csv.reader(f))) == without_seconds(rows)

    again = "autograd-lab grade-all submissions --out out --course course.toml"
    second = autograd_lab(*again.split()[1:], cwd=tmp_path)
    block = next(b for b in blocks if f"$ {again}" in b)
    assert [timeless(line) for line in of_the_class(second.stderr.splitlines() + second.stdout.splitlines())] == \
        [timeless(line) for line in shown_run(block, again)]

    shards = next(b for b in blocks if any(line.startswith("$ autograd-lab merge") for line in b))
    for command in [line[2:] for line in shards if line.startswith("$ ")]:
        result = autograd_lab(*command.split()[1:], cwd=tmp_path)
        lines = [timeless(line) for line in result.stderr.splitlines() + result.stdout.splitlines()]
        kept = [timeless(line) for line in shown_run(shards, command) if line != ELIDED]
        assert [line for line in lines if line in kept] == kept, command


# ----- docs/index.md: the lesson's table -----


def lesson_table() -> dict[int, tuple[str, str]]:
    """docs/index.md's table of the lesson's run: epoch -> (this engine's MSE, PyTorch's), as printed."""
    block = next(b for b in fenced_blocks((DOCS / "index.md").read_text()) if b and b[0].startswith("1-32-1 ReLU"))
    return {int(epoch): (ours, torch) for epoch, ours, torch in
            (line.split() for line in block if re.fullmatch(r" *\d+ +[\d.]+ +[\d.]+", line))}


def test_the_lessons_table_gives_the_stored_curve_of_this_engine():
    """Is docs/index.md's column for this engine the reference run's curve (graders/data/lesson_curve.json, held to
    solutions/lesson.py's run by tests/test_lesson.py), at the epochs `python -m solutions.lesson` prints?"""
    from graders import lesson
    from solutions import lesson as reference_lesson

    curve = lesson.reference_curve()
    table = lesson_table()
    assert sorted(table) == list(reference_lesson.REPORT)
    assert {epoch: ours for epoch, (ours, _) in table.items()} == {e: f"{curve[e - 1]:.4f}" for e in table}


@pytest.mark.slow
def test_the_lessons_table_gives_pytorchs_run():
    """Is docs/index.md's PyTorch column what `python -m solutions.lesson` prints for fit_torch's run?"""
    from solutions import lesson as reference_lesson

    curve = reference_lesson.run_torch(seed=0)
    assert {epoch: theirs for epoch, (_, theirs) in lesson_table().items()} == \
        {epoch: f"{curve[epoch - 1]:.4f}" for epoch in reference_lesson.REPORT}
