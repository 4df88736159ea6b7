"""What pyproject.toml cannot say: the wheel (and an editable install) puts ``autograd_lab.pth`` beside the package.

Its one line runs ``graders.entry.startup`` as this environment's Python starts, before the working folder is on
``sys.path``: ``python -m pytest -p graders.integrations.pytest_plugin`` run from inside a submission is refused
there, before a ``graders/`` or ``pytest/`` the submission carries could be imported in place of the real ones
(graders/entry.py says why nothing later could stop it). Every other start only reads ``sys.orig_argv``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "autograd_lab.pth"
# Silent where the package cannot be imported (nbgrader's kernel jail shows the environment without it).
LINE = ('import sys; exec("try:\\n from graders.entry import startup\\nexcept ImportError:\\n pass\\n'
        'else:\\n startup()") if "-m" in getattr(sys, "orig_argv", ()) else None\n')


class BuildWithStartup(build_py):
    """build_py, and the .pth at the top of what is installed: the wheel's root, or an editable wheel's."""

    def run(self):
        super().run()
        top = self.get_finalized_command("install").install_lib if getattr(self, "editable_mode", False) \
            else self.build_lib
        Path(top).mkdir(parents=True, exist_ok=True)
        (Path(top) / PTH).write_text(LINE)


setup(cmdclass={"build_py": BuildWithStartup})
