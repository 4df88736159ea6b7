"""Filling the templates of the files autograd-lab writes for other machines to run (graders/templates/: the
student workflow, the cluster examples, Gradescope's setup): each ``@NAME@`` replaced, torch pinned to the version
the graders run here, so that a student's CI, a cluster and Gradescope all grade under the same torch.

The bundle (graders.course.release) and Gradescope's zip (graders.integrations.gradescope) both fill them, so this
sits in the lower of their two layers (tests/test_structure.py's LAYERS)."""

from __future__ import annotations

import importlib.metadata


def torch_version() -> str:
    """The installed torch's version without its local part ("2.13.0+cpu" -> "2.13.0"): what the templates pin."""
    return importlib.metadata.version("torch").split("+", 1)[0]


def fill(template: str, **values: str) -> str:
    """``template`` with each ``@NAME@`` replaced by ``values[name]``."""
    for name, value in values.items():
        template = template.replace(f"@{name.upper()}@", value)
    return template
