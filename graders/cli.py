"""The ``autograd-lab`` command: parses arguments and dispatches, nothing more."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, build, paths


def _build_exercises(args) -> int:
    if args.check:
        stale = build.out_of_sync(paths.SOLUTIONS, args.out)
        if stale:
            print(f"exercises out of sync with solutions/: {', '.join(stale)}; "
                  "run `autograd-lab build-exercises`", file=sys.stderr)
            return 1
        print(f"{args.out}: in sync with solutions/")
        return 0
    changed = build.build_exercises(paths.SOLUTIONS, args.out)
    print(f"{args.out}: wrote {len(changed)} file(s){': ' + ', '.join(changed) if changed else ''}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autograd-lab", description="Autograding for the autograd lesson.")
    p.add_argument("--version", action="version", version=f"autograd-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("build-exercises", help="generate exercises/ from solutions/")
    b.add_argument("--out", type=Path, default=paths.EXERCISES, help="where to write (default: %(default)s)")
    b.add_argument("--check", action="store_true", help="only report whether the stubs are in sync")
    b.set_defaults(run=_build_exercises)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)
