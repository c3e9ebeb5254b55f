"""Nimbus's decisions: `decide.handle(model, event) -> (model, instructions)` over frozen data,
the topology state machine, the heartbeat cache and reassignment. Pure: no ZooKeeper, database,
socket or thread is reached from here (tests/unit/test_layers.py checks)."""
