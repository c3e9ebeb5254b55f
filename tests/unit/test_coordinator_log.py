"""The coordinator log's one replay: the live confs a new leader rebuilds and the submitted
confs the UI lists come from the same pass, with the same rules for what counts."""

from squall.nimbus.core.coordinator_log import CoordinatorMessage, replay


def message(seq, type_, key="k", epoch=1, **values):
    return CoordinatorMessage(seq, "1", type_, key, "h", "u", "n", 0.0, {**values, "epoch": epoch})


def test_live_confs_follow_set_config_and_removal_and_submitted_keeps_every_submit():
    log = [
        message(1, "submit", topology="a-1", conf={"x": 1}),
        message(2, "submit", topology="b-2", conf={"y": 2}),
        message(3, "set-config", key="x", topology="a-1", value=5),
        message(4, "kill", topology="b-2", removed=True),
        message(5, "set-config", key="y", topology="b-2", value=9),  # after its removal
    ]
    replayed = replay(log)
    assert replayed.live == {"a-1": {"x": 5}}
    assert replayed.submitted == {"a-1": {"x": 1}, "b-2": {"y": 2}}


def test_a_deposed_leaders_late_messages_count_for_neither():
    log = [
        message(1, "submit", topology="a-1", conf={"x": 1}, epoch=2),
        message(2, "set-config", key="x", topology="a-1", value=7, epoch=1),  # deposed
        message(3, "submit", topology="c-3", conf={}, epoch=1),  # deposed: never created
    ]
    replayed = replay(log)
    assert replayed.live == {"a-1": {"x": 1}} and replayed.submitted == {"a-1": {"x": 1}}


def test_messages_of_the_wrong_shape_are_skipped_for_both():
    log = [
        message(1, "submit", topology="a-1", conf={"x": 1}),
        message(2, "submit", topology=7, conf={}),  # not a topology id
        message(3, "submit", topology="d-4", conf=["not", "a", "dict"]),
        message(4, "set-config", key="x", topology="a-1"),  # no value
        message(5, "submit", topology="e-5", conf={}, epoch="2"),  # not an epoch
    ]
    replayed = replay(log)
    assert replayed.live == {"a-1": {"x": 1}} and replayed.submitted == {"a-1": {"x": 1}}


def bare(seq, type_, key="k", **values):
    """A message written before nimbus stamped epochs (no "epoch" value)."""
    return CoordinatorMessage(seq, "1", type_, key, "h", "u", "n", 0.0, values)


def test_a_log_from_before_epochs_counts_until_a_leader_stamps_one():
    log = [
        bare(1, "submit", topology="a-1", conf={"x": 1}),
        bare(2, "set-config", key="x", topology="a-1", value=2),
        message(3, "submit", topology="b-2", conf={}, epoch=1),
        bare(4, "set-config", key="x", topology="a-1", value=3),  # older than epoch 1
    ]
    assert replay(log).live == {"a-1": {"x": 2}, "b-2": {}}


def test_a_skipped_message_does_not_end_the_replay():
    log = [
        message(1, "submit", topology="a-1", conf={"x": 1}, epoch=2),
        message(2, "set-config", key="x", topology="a-1", value=7, epoch=1),  # deposed
        message(3, "submit", topology=7, conf={}, epoch=2),  # not a topology id
        message(4, "submit", topology="b-2", conf={"y": 1}, epoch=2),
        message(5, "set-config", key="x", topology="a-1", value=8, epoch=2),
    ]
    replayed = replay(log)
    assert replayed.live == {"a-1": {"x": 8}, "b-2": {"y": 1}}
    assert replayed.submitted == {"a-1": {"x": 1}, "b-2": {"y": 1}}


def test_a_kill_removes_the_live_conf_only_once_the_topology_is_removed():
    """A killed topology waits out its kill wait in status killed: its conf still counts."""
    log = [
        message(1, "submit", topology="a-1", conf={"x": 1}),
        message(2, "kill", topology="a-1", removed=False),
    ]
    assert replay(log).live == {"a-1": {"x": 1}}
    assert replay([*log, message(3, "kill", topology="a-1", removed=True)]).live == {}
