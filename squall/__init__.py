"""squall: a Storm-style topology scheduler. The public topology API lives here."""

from importlib import metadata as _metadata

from squall.components import Bolt, SparkBolt, Spout, TaskContext, Tuple
from squall.topology import Grouping, Topology

__all__ = ["Bolt", "Grouping", "SparkBolt", "Spout", "TaskContext", "Topology", "Tuple"]
try:  # the one version constant: pyproject.toml's, as installed
    __version__ = _metadata.version("squall")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
