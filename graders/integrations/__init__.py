"""Where grades go: nbgrader (the course directory, the trusted preprocessors and the jailed kernel), Gradescope
and GitHub Classroom."""
