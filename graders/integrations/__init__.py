"""Where grades go: nbgrader (the course directory, the trusted preprocessors and the jailed kernel), Gradescope
and pytest. GitHub Classroom's runner result is one more view of the result, rendered in graders.results."""
