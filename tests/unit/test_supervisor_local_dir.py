"""One supervisor per local dir (supervisor/identity.py `hold_local_dir`): a second one on
the same dir must stop before it kills the first one's workers as strays."""

from __future__ import annotations

import os

import pytest

from squall.supervisor.identity import DuplicateSupervisorError, hold_local_dir


def test_a_second_hold_of_the_same_dir_is_refused_until_the_first_ends(tmp_path):
    local_dir = tmp_path / "supervisor"
    first = hold_local_dir(local_dir)
    try:
        with pytest.raises(DuplicateSupervisorError, match="another supervisor is running on"):
            hold_local_dir(local_dir)
        other = hold_local_dir(tmp_path / "another")  # another dir is another supervisor
        os.close(other)
    finally:
        os.close(first)
    os.close(hold_local_dir(local_dir))  # released with its fd
