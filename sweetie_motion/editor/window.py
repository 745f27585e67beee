"""
The trajectory editor's main window: layout, and clicks forwarded to the presenter.

Everything the editor decides is in :class:`~sweetie_motion.editor.presenter.EditorPresenter`;
this module builds the widgets, forwards what a person does, asks the questions only a dialog
can (unsaved changes, restore a backup, file names) and redraws what the presenter says
changed. Every widget a person (or a test) uses has an objectName.
"""

from typing import Callable, Dict, List, Mapping, Optional

from PyQt5.QtCore import QTimer
from PyQt5.QtWidgets import QMainWindow, QMessageBox
from sweetie_motion.editor.presenter import EditorPresenter
from sweetie_motion.editor.table_checks import TableChecker
from sweetie_motion.editor.window_actions import WindowActions
from sweetie_motion.editor.window_findings import CheckFindings
from sweetie_motion.editor.window_layout import WindowLayout
from sweetie_motion.editor.window_play_head import PlayHeadControls
from sweetie_motion.editor.window_redraw import WindowRedraw
from sweetie_motion.editor.window_tabs import WindowTabs
from sweetie_motion.gui.stop_first import StopActions, StopFirst
from sweetie_motion.gui.unsaved import ask_about_unsaved

#: how often the adapters' events are taken and the presenter ticks [ms]
PUMP_MS = 50
#: the plot is drawn this long after the last change that needs it [ms]
VIEWS_DELAY_MS = 60


class EditorWindow(WindowLayout, WindowTabs, CheckFindings, PlayHeadControls, WindowRedraw,
                   WindowActions, QMainWindow):
    """
    The editor window: its state, the pump, and the close.

    Its parts, each with one job (mixins: they share the window's widgets):
    :class:`~sweetie_motion.editor.window_layout.WindowLayout` (the frame, the wiring),
    :class:`~sweetie_motion.editor.window_tabs.WindowTabs` (the tabs),
    :class:`~sweetie_motion.editor.window_findings.CheckFindings` (the motion checks),
    :class:`~sweetie_motion.editor.window_play_head.PlayHeadControls` (the play head),
    :class:`~sweetie_motion.editor.window_redraw.WindowRedraw` (what each topic redraws) and
    :class:`~sweetie_motion.editor.window_actions.WindowActions` (actions that ask first).

    :param presenter: the editor's state and actions.
    :param events: returns the adapters' new events (the bridge's ``poll``); None: no robot.
    :param poses: named poses {name: {joint: position}}.
    """

    def __init__(self, presenter: EditorPresenter,
                 events: Optional[Callable[[], List[object]]] = None,
                 poses: Optional[Mapping[str, Mapping[str, float]]] = None) -> None:
        super().__init__()
        self.presenter = presenter
        self.model = presenter.model
        self.events = events
        self.poses = dict(poses or {})
        self._syncing = False
        #: the document name last put into the name selector: a name the user types there is
        #: kept through edits of the table, and replaced only when the document's name changes
        self._shown_name = ''
        #: the document's generation shown (another one: a motion replaced the table)
        self._shown_generation = -1
        self._robot_view_time = 0.0
        self._robot_follows = False
        #: the 3D view shows the robot though a row is selected (Live, or a slider moved)
        self._live = False
        #: the motion checks of the table, run in a thread after each change (no model: none)
        self.table_checker = TableChecker(self.model) if self.model is not None else None
        self.setWindowTitle(presenter.title)
        self._build()
        #: every stop a person has, whatever the window shows (a question, a close)
        self.stops = StopFirst(self, StopActions(
            stop=presenter.stop_motion, moving=lambda: presenter.moving,
            keep_work=presenter.files.closing, message=lambda: presenter.message.text,
            say=presenter.say), [self.stop_all_button], 'trajectory editor')
        self._wire()
        #: what each of the presenter's topics redraws (every topic has one)
        self._views: Dict[str, Callable[[], None]] = {
            'document': self._show_document, 'selection': self._selection_shown,
            'pose': self._show_pose, 'links': self._show_links,
            'execution': self._show_execution, 'servos': self._show_servos,
            'message': self._show_message, 'names': self._show_names,
            'recording': self._show_recording, 'close': self._show_close}
        # the plot takes a quarter of a second to draw: drawn once when the edits of this
        # turn of the event loop are done, not once per change (an Add pose drew it 3 times)
        self._views_due = QTimer(self)
        self._views_due.setSingleShot(True)
        self._views_due.setInterval(VIEWS_DELAY_MS)
        self._views_due.timeout.connect(self.draw_views)
        self._plot_due = False
        presenter.subscribe(self._changed)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.pump)
        self._timer.start(PUMP_MS)
        for topic in ('document', 'links', 'execution', 'servos', 'names', 'recording'):
            self._changed(topic)
        QTimer.singleShot(0, self.offer_backup)

    # --- the pump ------------------------------------------------------------------------------

    def pump(self) -> None:
        """Hand the adapters' events to the presenter and let it tick (the timer calls it)."""
        if self.events is not None:
            for event in self.events():
                self.presenter.handle(event)
        self.presenter.tick()
        self._take_checks()
        if self.physics_line is not None and self.physics_line.take() is not None:
            self._show_findings()
        self.trajectory_plot.take()

    def closeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Stop what moves first; then ask Save / Discard / Cancel about unsaved changes."""
        p = self.presenter
        if self.stops.leaving:          # SIGTERM: the work is backed up, nothing is asked
            event.accept()
            return
        if not self.stops.may_close() or not self._keep_or_give_up_recording():
            event.ignore()
            return
        if not p.document.modified:
            p.files.closing()
            event.accept()
            return
        answer = ask_about_unsaved(self.stops, p.document.name or 'The untitled trajectory',
                                   'Save them to the storage before closing?')
        if answer == QMessageBox.Discard:
            p.files.closing(discard=True)
            event.accept()
        elif answer == QMessageBox.Save:
            # closes when the storage has it (the presenter says 'close'); stays if refused;
            # a stored name (a built-in's) is asked about as Save asks
            self.save(close_after=True)
            event.ignore()
        else:
            event.ignore()
