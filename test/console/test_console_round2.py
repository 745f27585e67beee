"""
The console's stumbles of issue #37 that need no arm, driven through the window at 1366 x 768.

The console runs without its motion process (a namespace nobody serves): what is tested is the
window's own work: what it shows at that size.
"""

from console_helpers import Console
from PyQt5.QtWidgets import QApplication
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the window's inside on a 1366 x 768 screen under openbox's title bar [px]
INSIDE = (1366, 740)


@pytest.fixture
def lone_console(qtbot, arm_model, tmp_path):
    """Open a console on a namespace no motion process serves; close it after the test."""
    console = Console('round2_nobody', arm_model, tmp_path / 'workspace')
    console.window.show()
    qtbot.waitExposed(console.window, timeout=10000)
    console.window.resize(*INSIDE)
    try:
        yield console
    finally:
        console.close()


def test_nothing_is_cut_in_the_console_at_1366x768(qtbot, lone_console, artifacts_dir):
    from pathlib import Path
    from console_helpers import screenshot
    from editor_helpers import cut_texts, steady
    window = lone_console.window
    steady(qtbot, lambda: window.size().width(), 0.3, 10, 'the window resized')
    lone_console.presenter.say('the program has an error: line 3: MOVL X2500 Y60 Z740 is '
                               "beyond the arm's reach; the tool cannot get there from any "
                               'pose of the arm, and the path to it is not planned; change '
                               'the target or the tool', 'error')
    QApplication.processEvents()
    cut = cut_texts(window)
    assert not cut, '\n'.join(cut)
    screenshot(lone_console, Path(artifacts_dir) / 'round2' / 'console_1366x768.png')


# judged in a pytest process no other window test ran in, as a person's console starts fresh:
# in the parallel phase, after about 1500 other tests on the same worker, the manual pane came
# out 24 px shorter and its boxes taller (523 px, the Gripper at 519..597) in two fresh runs of
# three, and never alone or after its neighbours (cause not established: noted in #37)
@pytest.mark.serial
def test_go_to_a_tool_pose_and_the_gripper_show_without_scrolling_at_1366x768(
        qtbot, lone_console):
    # issue #37: both needed the manual pane scrolled on a laptop's screen
    from editor_helpers import steady, until
    from PyQt5.QtWidgets import QGroupBox, QScrollArea
    window = lone_console.window
    pane = window.findChild(QScrollArea, 'manual_pane')
    # the window manager sizes the frame, then the layout the pane: both settle (on a loaded
    # machine the pane's height came after the window's width, and a layout request can wait
    # in the event queue past a pause: the boxes are waited for, with a deadline)
    steady(qtbot, lambda: (window.size(), pane.viewport().height()), 0.3, 10,
           'the window and its pane resized')
    viewport = pane.viewport()
    boxes = [window.findChild(QGroupBox, 'target_panel'), window.findChild(QGroupBox, 'jog_panel'),
             window.gripper_label.parentWidget()]

    def places():
        return [(box.title(), box.mapTo(viewport, box.rect().topLeft()).y(),
                 box.mapTo(viewport, box.rect().bottomLeft()).y()) for box in boxes]

    until(qtbot, lambda: pane.verticalScrollBar().value() == 0 and all(
        0 <= top and bottom < viewport.height() for _, top, bottom in places()), 10,
        lambda: f'{places()} (title, top, bottom) in a pane {viewport.height()} px high, '
                f'scrolled to {pane.verticalScrollBar().value()}; window {window.size()}')
    # what is in them can be clicked where it is
    for widget in (window.target_panel.text, window.target_panel.move_button,
                   window.clamp_button, window.release_button):
        assert widget.isVisible() and not widget.visibleRegion().isEmpty(), \
            widget.objectName()
