"""autograd-lab's hidden graders: the trusted judge, the untrusted worker, scorecards."""

__version__ = "0.1.0"
