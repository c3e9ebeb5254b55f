"""squall: a Storm-style topology scheduler. The public topology API lives here."""

from squall.components import Bolt, SparkBolt, Spout, TaskContext, Tuple
from squall.topology import Grouping, Topology

__all__ = ["Bolt", "Grouping", "SparkBolt", "Spout", "TaskContext", "Topology", "Tuple"]
__version__ = "0.1.0"
