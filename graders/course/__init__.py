"""What a course is made of: the stubs generated from solutions/ (build-exercises), the student bundle (release)
and the lesson notebook's text and visible checks; and the templates' filling (the student workflow, the cluster
examples, Gradescope's setup), torch pinned to the graders' own."""
