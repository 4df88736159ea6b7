"""Grading a class: the pool of judges, progress, the gradebook (grades.csv), shards and their merge."""
