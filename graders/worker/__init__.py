"""The untrusted side: a subprocess that imports a submission and answers the judge.

Nothing here decides a grade. Every answer is a claim that the judge checks:
student code runs in the same process and may have changed anything in it.
This package is copied into the sandbox and imports nothing from ``graders``.
"""
