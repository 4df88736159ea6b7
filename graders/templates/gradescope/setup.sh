#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or later).
# It installs Python, bubblewrap (every submission is graded in it, or not at all: where the container
# cannot start it, each results.json says so and why) and autograd-lab from the wheel in this zip, torch's
# CPU wheel and every other dependency pinned to the versions that built the zip (constraints.txt): no
# private index is needed, and Hypothesis draws here what it draws for the instructor.
# The course file holds the course's secret: readable by root alone, never by a student's code.
set -euo pipefail
cd "$(dirname "$0")"
chmod 600 @COURSE@
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q python3 python3-venv python3-pip bubblewrap
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install -q --upgrade pip
/autograder/venv/bin/python -m pip install -q "torch==@TORCH_VERSION@" --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/python -m pip install -q -c constraints.txt ./@WHEEL@
