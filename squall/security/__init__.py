"""Who may talk to whom: secure or open mode, the cluster's certificates and TLS contexts,
credentials made at first start, topologies' CURVE keys and user credentials."""
