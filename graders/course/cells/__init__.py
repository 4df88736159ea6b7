"""The code the nbgrader notebook's cells run, as real Python (cell_source reads the cells' text from it): the setup
cell (setup.py), each task's visible check (visible.py) and the lesson's worked examples (examples.py)."""
