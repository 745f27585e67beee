"""The stop matrix of the operator console (issue #33): see stop_matrix.py."""

import pytest
from stop_matrix import (  # noqa: F401 -- the matrix's fixture and tests, for this window
    states,
    test_a_killed_window_stops_its_motion_within_half_a_second,
    test_at_rest_ctrl_c_and_close_ask_about_unsaved_work_and_sigterm_keeps_it,
    test_ctrl_c_and_the_close_button_beside_a_question_stop_the_robot_and_keep_the_question,
    test_ctrl_c_and_the_close_button_stop_the_robot_first_then_close_or_ask,
    test_sigterm_stops_the_robot_then_leaves_with_unsaved_work_backed_up,
    test_the_stop_button_and_the_stop_keys_stop_the_robot_whatever_the_window_shows,
)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the window these tests drive
WINDOW = 'console'
