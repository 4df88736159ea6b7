"""A submission as files, trusted: how it is taken in (``intake``: found, hashed, unpacked) and laid out in a scratch
folder as the workers' packages (``layout``), which the isolation builds its sandboxes from. Nothing here reads
student code as code: its files are copied, never imported."""
