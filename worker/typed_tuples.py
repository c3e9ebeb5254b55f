"""NamedTuples equal only to their own type: a Send(3, ...) is not an AckTree(3, ...) of the
same numbers, which plain tuple equality would have it be.

A module of its own, left out of the compiled HOT_PATH (squall/hot_path.py): the functions
below become methods of the classes they are set on, and only a Python function binds `self`
that way (a function compiled by mypyc does not).
"""

from __future__ import annotations


def equal_only_to_own_type(*classes: type, hashable: bool = True) -> None:
    """Give each class typed equality (and a hash that tells the types apart, or none)."""
    for cls in classes:
        cls.__eq__ = _same_type_eq  # type: ignore[method-assign,assignment]
        cls.__ne__ = _same_type_ne  # type: ignore[method-assign,assignment]
        cls.__hash__ = _typed_hash if hashable else None  # type: ignore[method-assign,assignment]


def _same_type_eq(self: tuple, other: object) -> bool:
    return type(self) is type(other) and tuple.__eq__(self, other)  # type: ignore[arg-type]


def _same_type_ne(self: tuple, other: object) -> bool:
    return not _same_type_eq(self, other)


def _typed_hash(self: tuple) -> int:
    return hash((type(self).__name__, tuple.__hash__(self)))
