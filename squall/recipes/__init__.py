"""Kazoo-style coordination recipes: a pure decision core per recipe (states, typed events
in, typed instructions out) and a thin shell that turns ZooKeeper callbacks into events and
carries out the instructions."""
