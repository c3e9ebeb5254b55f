"""Storm's debug option as pure rules (squall.event_sampling): the percentage as Storm
clamps it, which option applies to a component, and a seeded sampler that logs the share
asked for."""

import math

import pytest

from squall.event_sampling import (
    Sampler,
    SamplingError,
    percentage_for,
    sampled,
    sampling_percentage,
    with_debug,
)


def test_percentage_is_clamped_and_nan_refused():
    assert sampling_percentage(250) == 100.0
    assert sampling_percentage(-3) == 0.0
    assert sampling_percentage(12.5) == 12.5
    with pytest.raises(SamplingError):
        sampling_percentage(math.nan)


def test_enable_sets_and_disable_removes_one_key():
    options = with_debug({}, "t-1", True, 10)
    options = with_debug(options, "split", True, 150)
    assert options == {"t-1": 10.0, "split": 100.0}
    assert with_debug(options, "t-1", False, 0) == {"split": 100.0}
    assert with_debug({}, "x", False, 50) == {}


def test_a_components_own_option_wins_over_the_topologys():
    options = {"t-1": 10.0, "split": 50.0}
    assert percentage_for(options, "t-1", "split") == 50.0
    assert percentage_for(options, "t-1", "count") == 10.0
    assert percentage_for({}, "t-1", "count") == 0.0


def test_sampled_compares_the_draw_with_the_percentage():
    assert sampled(100.0, 0.999)
    assert not sampled(0.0, 0.0)
    assert sampled(25.0, 0.2499)
    assert not sampled(25.0, 0.25)


def test_a_seeded_sampler_repeats_and_takes_about_the_share_asked_for():
    first, second = Sampler(seed=7), Sampler(seed=7)
    assert not any(first() for _ in range(100))  # off until a percentage is set
    first.percentage = second.percentage = 30.0
    runs = [[s() for _ in range(10_000)] for s in (first, second)]
    assert runs[0] == runs[1]
    assert 2_800 < sum(runs[0]) < 3_200
    first.percentage = 100.0
    assert all(first() for _ in range(1000))
