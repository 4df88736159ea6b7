"""The worker's processes, seen from outside and trusted: the judge's handle on them (``worker_process``), the sandbox
and bubblewrap, the fork servers, the uids they run as, their budgets, /proc, and the worker's files read by the judge
itself. Nothing here grades, knows a verb or an oracle, or imports torch: the judge hands the handle where each request
goes and the answers to its workers' oracle calls (``graders.judge.routing``)."""
