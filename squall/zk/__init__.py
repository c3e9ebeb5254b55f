"""ZooKeeper for every daemon: connecting with the cluster's identity, the node layout, ACLs,
multi-reads, and real servers for local clusters and tests."""
