import os
import sys

# `python -m graders` puts the working directory first on sys.path. Run from a submission's folder, its
# numpy.py (or any module named like one the judge imports) would run inside the judge: import the judge's
# packages from where graders itself lives instead.
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from graders.cli import run  # noqa: E402

run()
