"""The cost per row of the frames between workers (worker/codec.py), apart from the rest of a
worker: encode_bounded then decode of n deliveries for one peer, best of 3, for the
pertuple bench's tuples (a word and a float, one root) and for AckTrees.

    .venv/bin/python bench/wire_codec.py

The AckTrees go as system-stream tuples (acking.message_delivery) where the codec has no
protocol frames, so that the same script measures a tree from before slice N too.
"""

from __future__ import annotations

import random
import time
from typing import Any

from squall.worker import codec
from squall.worker.acking import AckTree
from squall.worker.delivery import TupleDelivery

ROWS = (10, 128, 512, 1000, 2048)
PROTOCOL_FRAMES = hasattr(codec, "PROTOCOL_MAGIC")


def fields_of(component: str, stream: str) -> tuple[str, ...]:
    return ("word", "t") if stream == "default" else ("root", "xor")


def deliveries(kind: str, n: int, rng: random.Random) -> list[Any]:
    def new_id() -> int:
        return rng.getrandbits(64) - (1 << 63)

    if kind == "tuples":
        return [
            TupleDelivery(
                3, "upper", 5, "default", (f"WORD{i % 1000}", time.time()), (new_id(),), (new_id(),)
            )
            for i in range(n)
        ]
    messages = [AckTree(2, new_id(), new_id()) for _ in range(n)]
    if PROTOCOL_FRAMES:
        return messages
    from squall.worker.acking import message_delivery  # the wire form before protocol frames

    return [message_delivery(m) for m in messages]


def per_row(items: list[Any]) -> tuple[float, float]:
    """Microseconds a row to encode and to decode, best of 3."""
    reps = max(3, 40_000 // len(items))
    best_encode = best_decode = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(reps):
            frames, _ = codec.encode_bounded(items, fields_of, 1 << 30)
        encoded = time.perf_counter()
        for _ in range(reps):
            for frame in frames:
                codec.decode(frame)
        decoded = time.perf_counter()
        best_encode = min(best_encode, (encoded - start) / reps / len(items))
        best_decode = min(best_decode, (decoded - encoded) / reps / len(items))
    return best_encode * 1e6, best_decode * 1e6


def main() -> None:
    rng = random.Random(16)
    print(f"protocol frames: {PROTOCOL_FRAMES}")
    for kind in ("tuples", "acks"):
        for n in ROWS:
            encode_us, decode_us = per_row(deliveries(kind, n, rng))
            print(f"{kind:6s} {n:5d} rows: encode {encode_us:5.2f} us/row, decode {decode_us:5.2f}")


if __name__ == "__main__":
    main()
