"""``python -m graders``: the console script's command line, once ``graders.entry.guard`` has made sure that the
judge running is not one the working folder supplies (a submission's own graders/)."""

from graders.entry import guard

guard("graders")

from graders.cli import run  # noqa: E402

run()
