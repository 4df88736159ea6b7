"""Grading one submission, trusted: the layout of its workers' packages, the workers' handles, the sandbox and
budgets, intake, the checks (one module per group of tasks), the strategies that draw their inputs and the
reference values. Nothing here imports student code: it runs in the workers (``graders.worker``), and the only
module of that package the judge imports is its wire format, ``graders.worker.protocol``."""
