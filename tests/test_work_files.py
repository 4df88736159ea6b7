"""Does the judge read and write a worker's folder from outside without being led elsewhere
(graders/isolation/work_files.py)?

The folder belongs to code the judge does not trust: a name in it may be a link (beyond ``/proc/<pid>/root`` an
absolute one resolves in the judge's own root), a FIFO that would block a reader, or a file too large to hold.
"""

from __future__ import annotations

import os
import threading

import pytest
from corpus import make_submission
from hostile import BY_NAME as HOSTILE

from graders import messages as msg
from graders.isolation import fork_servers, sandbox, work_files
from graders.judge.grade import grade
from graders.paths import SOLUTIONS


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "work").mkdir()
    with work_files.opened(tmp_path, ("work",)) as fd:
        yield tmp_path / "work", fd


def test_a_regular_file_is_read_and_a_missing_one_is_none(folder):
    path, fd = folder
    (path / "checkpoint").write_bytes(b"PK\x03\x04 and more")
    assert work_files.read(fd, "checkpoint") == b"PK\x03\x04 and more"
    assert work_files.read(fd, "absent") is None
    assert work_files.names(fd) == ["checkpoint"]


@pytest.mark.parametrize("target", ["absolute", "relative"])
def test_a_link_is_never_followed(folder, tmp_path, target):
    path, fd = folder
    secret = tmp_path / "secret"
    secret.write_bytes(b"the judge's own file")
    os.symlink(secret if target == "absolute" else "../secret", path / "checkpoint")
    with pytest.raises(work_files.NotAFile, match="a symbolic link"):
        work_files.read(fd, "checkpoint")


def test_a_fifo_is_refused_without_waiting_for_a_writer(folder):
    path, fd = folder
    os.mkfifo(path / "checkpoint")
    done = []
    reader = threading.Thread(target=lambda: done.append(pytest.raises(work_files.NotAFile, work_files.read,
                                                                       fd, "checkpoint")), daemon=True)
    reader.start()
    reader.join(10)
    assert done and "a FIFO" in str(done[0].value)


def test_a_file_larger_than_the_cap_is_refused(folder, monkeypatch):
    path, fd = folder
    monkeypatch.setattr(work_files, "MAX_FILE_BYTES", 100)
    (path / "checkpoint").write_bytes(b"x" * 101)
    with pytest.raises(work_files.NotAFile, match="101 bytes"):
        work_files.read(fd, "checkpoint")


def test_a_write_replaces_a_link_and_leaves_its_target_alone(folder, tmp_path):
    path, fd = folder
    secret = tmp_path / "secret"
    secret.write_bytes(b"the judge's own file")
    os.symlink(secret, path / "checkpoint")
    work_files.write(fd, "checkpoint", b"the judge's checkpoint", owner=None)
    assert secret.read_bytes() == b"the judge's own file"
    assert not (path / "checkpoint").is_symlink()
    assert (path / "checkpoint").read_bytes() == b"the judge's checkpoint"


def test_a_folder_on_the_way_that_is_a_link_is_unreachable(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "work")
    with pytest.raises(work_files.Unreachable), work_files.opened(tmp_path, ("work",)):
        pass


def test_remove_takes_files_and_links_and_leaves_folders(folder, tmp_path):
    path, fd = folder
    (path / "checkpoint").write_bytes(b"")
    (path / "checkpoint.tmp").mkdir()
    os.symlink(tmp_path / "absent", path / "checkpoint.link")
    work_files.remove(fd, ["checkpoint", "checkpoint.tmp", "checkpoint.link", "never"])
    assert work_files.names(fd) == ["checkpoint.tmp"]


# ----- task 5.5, graded with the file read from outside the worker, in every way a worker runs -----

WAYS = {"forked": ("bubblewrap", None), "started cold": ("bubblewrap", "off"), "process limits": ("limits", None)}


@pytest.mark.parametrize("way", list(WAYS))
def test_the_checkpoint_is_read_and_changed_from_outside_in_every_way_a_worker_runs(way, tmp_path, monkeypatch):
    """Does 5.5 pass the reference, and fail one that resumes from weights kept in memory (the judge changed the
    file's), whether the worker was forked into bubblewrap, started cold in it, or runs under process limits?"""
    isolation, switch = WAYS[way]
    if isolation == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap cannot make a sandbox here")
    if switch:
        monkeypatch.setenv(fork_servers.SWITCH_ENV, switch)
    assert grade(SOLUTIONS, task_ids=("5.5",), isolation=isolation).results[0].status == "passed"
    (_, _, text), = HOSTILE["checkpoint_in_memory"].files
    in_memory = make_submission(tmp_path, "in_memory", [])
    with open(in_memory / "train.py", "a") as f:
        f.write(text)
    result = grade(in_memory, task_ids=("5.5",), isolation=isolation).results[0]
    assert result.status == "failed" and result.message.endswith(msg.HINT.format(hint=msg.HINT_CKPT_NOT_FROM_FILE))
