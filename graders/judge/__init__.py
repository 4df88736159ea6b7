"""Grading one submission, trusted: the grade (every task's ladder), the checks (one module per group of tasks), the
strategies that draw their inputs, the examples cache, the reference values, the oracles and the routing of each
request to its worker's process (``routing``, handed to the handle of ``graders.isolation``). Nothing here imports
student code: it runs in the workers (``graders.worker``), and the only module of that package the judge imports is
its wire format, ``graders.worker.protocol``."""
