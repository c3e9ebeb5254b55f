"""The sender's outbox: everything in put order, a waiting taker woken by enough deliveries or
any control item (never left asleep past its deadline), producers held at the limit."""

import threading
import time

from squall.worker.sender_outbox import SendQueue


def taker(outbox: SendQueue, **kwargs):
    got: list = []
    done = threading.Event()

    def run():
        got.extend(outbox.take(**kwargs))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return got, done


def test_take_returns_everything_in_put_order_and_empties_the_outbox():
    outbox = SendQueue()
    outbox.put(["a", "b"], 2)
    outbox.put("status")
    outbox.put(["c"], 1)
    assert outbox.take() == [["a", "b"], "status", ["c"]]
    assert outbox.queued == 0
    assert outbox.take(deadline=time.monotonic()) == []  # a passed deadline: what is there


def test_an_idle_taker_wakes_for_the_first_delivery():
    outbox = SendQueue()
    got, done = taker(outbox)
    assert not done.wait(0.05)
    outbox.put(["a"], 1)
    assert done.wait(10) and got == [["a"]]


def test_a_gathering_taker_wakes_at_enough_deliveries_or_a_control_item():
    outbox = SendQueue()
    far = time.monotonic() + 60
    got, done = taker(outbox, at_least=3, deadline=far)
    outbox.put(["a", "b"], 2)
    assert not done.wait(0.05)  # two of three
    outbox.put(["c"], 1)
    assert done.wait(10) and got == [["a", "b"], ["c"]]
    got, done = taker(outbox, at_least=3, deadline=far)
    outbox.put(["d"], 1)
    outbox.put(None)  # close: a control item
    assert done.wait(10) and got == [["d"], None]


def test_a_gathering_taker_gets_what_is_there_at_its_deadline():
    outbox = SendQueue()
    outbox.put(["a"], 1)
    got, done = taker(outbox, at_least=100, deadline=time.monotonic() + 0.2)
    assert done.wait(10) and got == [["a"]]


def test_producers_wait_at_the_limit_until_a_take():
    outbox = SendQueue(limit=2)
    outbox.put(["a", "b"], 2)
    stopped, closing, held = threading.Event(), threading.Event(), threading.Event()
    waiter = threading.Thread(
        target=lambda: (outbox.wait_for_room(threading.Event(), closing), held.set()),
        daemon=True,
    )
    waiter.start()
    assert not held.wait(0.1)
    assert outbox.take() == [["a", "b"]]
    assert held.wait(10)
    outbox.put(["c", "d"], 2)
    stopped.set()
    outbox.wait_for_room(stopped, closing)  # a stopping producer never waits
    SendQueue().wait_for_room(threading.Event(), closing)  # no limit: never waits


def test_gathering_says_how_long_until_enough_deliveries_or_the_oldest_has_waited():
    outbox = SendQueue()
    outbox.put(["a"], 1)
    assert 59 < outbox.gathering(3, 60.0) <= 60.0  # one of three, just put
    time.sleep(0.01)
    outbox.put(["b"], 1)  # the oldest delivery's wait counts, not the newest's
    assert outbox.gathering(3, 0.01) <= 0
    outbox.put(["c"], 1)
    assert outbox.gathering(3, 60.0) == 0.0  # enough
    outbox.take()
    outbox.put(["d"], 1)
    outbox.put("status")
    assert outbox.gathering(3, 60.0) == 0.0  # a control item never waits
