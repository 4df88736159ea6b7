#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or later).
# It installs Python, bubblewrap (every submission is graded in it, or not at all: where the container
# cannot start it, each results.json says so and why) and autograd-lab from the wheel in this zip, with
# torch's CPU wheel pinned: no private index is needed.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q python3 python3-venv python3-pip bubblewrap
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install -q --upgrade pip
/autograder/venv/bin/python -m pip install -q "torch==@TORCH_VERSION@" --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/python -m pip install -q -c constraints.txt ./@WHEEL@
