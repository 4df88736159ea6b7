"""Write a graded submission's files: results.json, the Markdown scorecard and its picture, JUnit, Classroom 50's.

Every file is rendered from the canonical results dict (``scorecard.results``),
except the picture, which draws what task 5.4 recorded. The picture goes
beside results.json (or beside the Markdown when there is no results.json),
and the Markdown links it.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from graders import messages as msg
from graders.files import atomic_write
from graders.results import classroom, pictures, scorecard


def markdown(result: dict, picture: str | None = None) -> str:
    """The Markdown scorecard, with a link to the picture when there is one."""
    text = scorecard.markdown(result)
    if picture is None:
        return text
    return text.rstrip("\n") + "\n\n" + msg.PICTURE_LINK.format(file=picture) + "\n"


def write_picture(report, folder: Path, *, warn=None, painter: pictures.Painter | None = None) -> str | None:
    """Draw the loss curve of ``report`` into ``folder/loss.png``; its file name, or None when not drawn.

    A stale picture from an earlier grading is removed when there is nothing to draw.
    ``warn`` (a callable taking one line) hears why when matplotlib is missing.
    """
    path = Path(folder) / pictures.LOSS_PNG
    data = pictures.loss_data(report)
    drawn = painter.draw(data) if painter is not None else None
    if data is None:
        path.unlink(missing_ok=True)
        return None
    if not pictures.available():
        if warn is not None:
            warn(msg.NO_PICTURES)
        return None
    atomic_write(path, drawn or pictures.loss_png(data))
    return path.name


def write_views(report, result: dict, *, results: Path | None = None, markdown_path: Path | None = None,
                junit: Path | None = None, classroom_path: Path | None = None, warn=None,
                painter: pictures.Painter | None = None) -> None:
    """Write each view that has a path; each file is written whole or not at all. ``painter`` draws loss.png, if
    given (``pictures.Painter``, started before the grade)."""
    picture = None
    if results is not None or markdown_path is not None:
        folder = Path(results if results is not None else markdown_path).parent
        picture = write_picture(report, folder, warn=warn, painter=painter)
        if picture is not None and markdown_path is not None:
            picture = Path(os.path.relpath(folder / picture, Path(markdown_path).parent)).as_posix()
    if results is not None:
        atomic_write(results, scorecard.dumps(result))
    if markdown_path is not None:
        atomic_write(markdown_path, markdown(result, picture))
    if junit is not None:
        atomic_write(junit, scorecard.junit(result))
    if classroom_path is not None:
        when = classroom.commit_time(Path(report.submission)) or datetime.now(timezone.utc)
        atomic_write(classroom_path, scorecard.dumps(classroom.result_v1(result, classroom.identity(), when)))


def stderr_line(line: str) -> None:
    """Print a warning line to stderr: the ``warn`` the command hands write_views, so a missing matplotlib is said
    without touching stdout's scorecard."""
    print(line, file=sys.stderr)
