"""Values written as Java's toString writes them, where squall prints what Storm's Java
prints (its UI's generic resources, `storm localconfvalue`): a Double as 2.0 or 2.0E10, null,
true, a list as [a, b], a map as {k=v}."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any


def java_double(value: float) -> str:
    """A double as Java's Double.toString writes it: 2.0, 0.5, and from 1e7 up or below 1e-3
    the computerized scientific form, 2.0E10, 1.0E-4 (the shortest digits either way)."""
    x = float(value)
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)  # a finite number's
    head, tail = str(digits[0]), "".join(map(str, digits[1:])) or "0"
    return f"{'-' if sign else ''}{head}.{tail}E{exponent + len(digits) - 1}"


def java_string(value: Any) -> str:
    """`value` (a YAML-read conf value) as String.valueOf writes the Java object it reads as."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(java_string, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_string(k)}={java_string(v)}" for k, v in value.items()) + "}"
    return str(value)
