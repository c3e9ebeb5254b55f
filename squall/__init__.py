"""squall: a Storm-style topology scheduler. The public topology API lives here."""

from squall import hot_path

hot_path.select()  # before any per-tuple module: compiled, or the sources where they changed

from squall.components import Bolt, SparkBolt, Spout, TaskContext, Tuple  # noqa: E402
from squall.topology import Grouping, Topology  # noqa: E402

__all__ = ["Bolt", "Grouping", "SparkBolt", "Spout", "TaskContext", "Topology", "Tuple"]


def __getattr__(name: str) -> str:
    """`__version__`, read when asked: importlib.metadata costs every worker's start 50 ms."""
    if name != "__version__":
        raise AttributeError(f"module 'squall' has no attribute {name!r}")
    from importlib import metadata

    try:  # the one version constant: pyproject.toml's, as installed
        return metadata.version("squall")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0+unknown"
