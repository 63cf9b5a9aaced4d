"""Directories readable by the server's user only, whichever command creates them first."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_DIRECTORY_MODE = 0o700


def make_private_directory(directory: Path) -> None:
    """Create ``directory`` and any missing parent, each created one mode 0700 whatever the umask (``serve``,
    ``dynastore users``, ``dynastore policies`` and the in-process mode all make the data directory through here).
    Directories that exist keep their mode. Raises OSError."""
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_DIRECTORY_MODE)
        except FileExistsError:
            if not path.is_dir():
                raise
            continue  # made meanwhile by another process: its mode is that process's choice
        os.chmod(path, PRIVATE_DIRECTORY_MODE)  # mkdir's mode is masked by the umask
