"""The `squall` command: run daemons, submit and manage topologies, run one locally.

Each command group lives in its own module under squall.commands; importing them here
registers them on `main`, so `squall.cli:main` and `python -m squall.cli` stay the entry points.
"""

from __future__ import annotations

import squall.commands.proxy  # noqa: F401 - registers `squall proxy`
import squall.commands.spark  # noqa: F401 - registers `squall spark`
from squall.commands import (  # noqa: F401 - importing a module registers its commands
    blobstore,
    credentials,
    daemons,
    heartbeats,
    local_run,
    monitor,
    storm_verbs,
    topologies,
)
from squall.commands.group import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
