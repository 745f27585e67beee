"""
A console that ends with unsaved edits leaves a backup, offered at the next start (#20, item 1).

The console is killed (its window taken away without a close, as SIGKILL or a crash would);
the next console on the same workspace asks whether to restore the program, as the editor does.
"""

from pathlib import Path

from console_helpers import Console, screenshot, until
from editor_helpers import answer
from PyQt5.QtWidgets import QMessageBox
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_a_killed_console_offers_its_unsaved_program_at_the_next_start(
        qtbot, arm_model, tmp_path, artifacts_dir):
    workspace = tmp_path / 'workspace'
    first = Console('console_backups', arm_model, workspace)
    first.window.show()
    qtbot.waitExposed(first.window, timeout=10000)
    first.presenter.backups.period = 0.5   # a person's 30 s, shortened
    first.window.editor.setPlainText('HOME\nMOVL Z800 F100\n')
    until(qtbot, lambda: first.presenter.backups.folder.files(), 10, 'a backup')
    first.kill()

    second = Console('console_backups', arm_model, workspace)
    try:
        def start() -> None:
            second.window.show()
            qtbot.waitExposed(second.window, timeout=10000)

        text = answer(qtbot, QMessageBox.Yes, start,
                      snapshot=Path(artifacts_dir) / 'console' / 'restore_question.png')
        assert 'The console ended with unsaved changes' in text and 'untitled program' in text
        until(qtbot, lambda: second.window.editor.toPlainText() == 'HOME\nMOVL Z800 F100\n',
              5, 'the program restored')
        assert second.window.isWindowModified()
        screenshot(second, Path(artifacts_dir) / 'console' / 'restored.png')
    finally:
        second.close()
    # the second closed with the edits given up on purpose: nothing offered the third time
    third = Console('console_backups', arm_model, workspace)
    try:
        assert third.presenter.pending_backup() is None
    finally:
        third.kill()
