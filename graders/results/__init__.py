"""The scorecard of one graded submission and every view rendered from it: the terminal table, Markdown for a CI
job summary, JUnit XML, GitHub Classroom's runner result, the loss picture."""
