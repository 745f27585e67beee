"""
The console's stumbles of issue #37 that need no arm, driven through the window at 1366 x 768.

The console runs without its motion process (a namespace nobody serves): what is tested is the
window's own work, Save as... here.
"""

from console_helpers import Console, until
from PyQt5.QtCore import Qt
from PyQt5.QtTest import QTest
from PyQt5.QtWidgets import QApplication, QFileDialog, QLineEdit
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


def test_save_as_adds_txt_to_a_bare_name(qtbot, lone_console, tmp_path):
    from test_editor_round2 import in_dialog
    window = lone_console.window
    window.editor.setPlainText('HOME\nMOVL Z800 F100\n')

    def type_bare_name(dialog) -> None:
        # the person looks at every file, then types a name without a suffix
        dialog.selectNameFilter('all files (*)')
        name = dialog.findChild(QLineEdit, 'fileNameEdit')
        QTest.keyClicks(name, str(tmp_path / 'wave_twice'))
        QTest.keyClick(name, Qt.Key_Return)
    in_dialog(qtbot, QFileDialog, type_bare_name,
              lambda: qtbot.mouseClick(window.save_as_button, Qt.LeftButton))
    until(qtbot, lambda: (tmp_path / 'wave_twice.txt').exists(), 10, 'wave_twice.txt written')
    assert not (tmp_path / 'wave_twice').exists()
    assert (tmp_path / 'wave_twice.txt').read_text() == 'HOME\nMOVL Z800 F100\n'
    assert lone_console.presenter.source == str(tmp_path / 'wave_twice.txt')
    assert not window.isWindowModified()


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
