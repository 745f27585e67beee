"""The suite's xdist groups: a file on one worker, the editor's folder whole, real-time files."""

from xdist_groups import group_of


def test_a_file_is_a_group_the_editors_folder_one_and_the_real_time_files_one():
    assert group_of('test/ros/test_safe_references.py::test_x[abort on path tolerance]') == \
        group_of('test/ros/test_safe_references.py::test_y') == \
        'test/ros/test_safe_references.py'
    assert group_of('test/editor/test_editor_window.py::test_a') == \
        group_of('test/editor/test_editor_round2.py::test_b[x]') == 'editor'
    assert group_of('test/ros/test_parameters.py::test_a') == \
        group_of('test/unit/test_servo_control_delay.py::test_b') == \
        group_of('test/ros/test_physics_robot.py::test_c')
    assert group_of('test/unit/test_arbiter.py::test_a') != \
        group_of('test/unit/test_host.py::test_a')
