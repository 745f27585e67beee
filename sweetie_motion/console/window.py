"""
The operator console's main window: layout, and what a person does forwarded to the presenter.

Everything the console decides is in :class:`~sweetie_motion.console.presenter.ConsolePresenter`;
this module builds the widgets, forwards clicks, asks for file names and redraws what the
presenter says changed. Every widget a person (or a test) uses has an objectName.
"""

import os
from typing import Callable, List, Optional

from PyQt5.QtCore import QTimer
from PyQt5.QtWidgets import QMainWindow, QMessageBox
from sweetie_motion.console.manual_moves import describe_turns
from sweetie_motion.console.presenter import ConsolePresenter, TOPICS
from sweetie_motion.console.window_layout import ConsoleLayout
from sweetie_motion.console.window_redraw import ConsoleRedraw
from sweetie_motion.gui.stop_first import StopActions, StopFirst
from sweetie_motion.gui.unsaved import ask_about_unsaved, offer_backup

#: how often the adapters' events are taken and the presenter ticks [ms]
PUMP_MS = 50
#: how often the robot view may redraw [ms] (a frame takes about 10 ms of the GUI thread)
VIEW_MS = 100


class ConsoleWindow(ConsoleLayout, ConsoleRedraw, QMainWindow):
    """
    The console window: its state, the pump, the files' dialogs and the close.

    Its parts, each with one job (mixins: they share the window's widgets):
    :class:`~sweetie_motion.console.window_layout.ConsoleLayout` (the panes and their wiring)
    and :class:`~sweetie_motion.console.window_redraw.ConsoleRedraw` (what each topic
    redraws).

    :param presenter: the console's state and actions.
    :param events: returns the adapters' new events (the bridge's ``poll``); None: no robot.
    :param where: what the title says the console drives (namespace, chain).
    """

    def __init__(self, presenter: ConsolePresenter,
                 events: Optional[Callable[[], List[object]]] = None, where: str = '') -> None:
        super().__init__()
        self.presenter = presenter
        self.events = events
        self.where = where
        self._shown_chain = ''
        self._show_title()
        self._build()
        #: every stop a person has, whatever the window shows (a question, a close)
        self.stops = StopFirst(self, StopActions(
            stop=presenter.stop, moving=lambda: presenter.moving,
            keep_work=presenter.closing, message=lambda: presenter.message.text,
            say=presenter.say), [self.stop_button], 'sweetie-motion console')
        presenter.subscribe(self._changed)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.pump)
        self._timer.start(PUMP_MS)
        self._view_timer = QTimer(self)
        self._view_timer.timeout.connect(self.robot_view.redraw)
        self._view_timer.start(VIEW_MS)
        for topic in TOPICS:
            if topic != 'message':
                self._changed(topic)
        presenter.say(f'waiting for the motion process {where} (its joint_states) ...'
                      if not presenter.connected else 'the motion process is connected')
        QTimer.singleShot(0, self.offer_backup)

    def jog(self, axis: str, direction: int) -> None:
        """Jog one step; ask first when it would turn a joint far (near a singularity)."""
        p = self.presenter
        turns = p.jog_turns(axis, direction)
        if turns:
            answer = self.stops.question(
                'A large joint turn',
                f'This small step of the tool turns {describe_turns(p.model, turns)} (the '
                'arm is near a singularity: the wrist swings). Move?',
                QMessageBox.Yes | QMessageBox.Cancel, QMessageBox.Cancel, name='jog_question')
            if answer != QMessageBox.Yes:
                p.say('jog not made: nothing moved')
                return
        p.jog(axis, direction, confirmed=bool(turns))

    def run_program(self) -> None:
        """Run; ask first when the program starts a large reconfiguration (non-modal)."""
        self._run_asking(single=False)

    def step_program(self) -> None:
        """Step; ask first as :meth:`run_program` does."""
        self._run_asking(single=True)

    def _run_asking(self, single: bool) -> None:
        p = self.presenter
        ahead = p.reconfiguration_ahead(single)
        if ahead:
            verb = 'Step' if single else 'Run'
            answer = self.stops.question(
                'A large reconfiguration', f'{ahead[0].upper()}{ahead[1:]}. {verb}?',
                QMessageBox.Yes | QMessageBox.Cancel, QMessageBox.Cancel,
                name='reconfiguration_question')
            if answer != QMessageBox.Yes:
                p.say(f'{verb} not made: nothing moved')
                return
            if p.reconfiguration_ahead(single) != ahead:
                # the program or its plan changed while the question was open: what was
                # agreed to is not what would run
                p.say(f'{verb} not made: the program changed while asked; nothing moved',
                      'warning')
                return
        if single:
            p.step(confirmed=bool(ahead))
        else:
            p.run(confirmed=bool(ahead))

    def offer_backup(self) -> None:
        """Offer the backup a console with unsaved edits left behind (at the start)."""
        offer_backup(self.stops, 'The console', self.presenter)

    # --- construction --------------------------------------------------------------------------

    def open_program(self) -> None:
        """Ask for a program file and read it (after asking about unsaved edits)."""
        if not self._keep_or_give_up_edits('open another program'):
            return
        path = self.stops.ask_file('Open a motion program', self.presenter.source,
                                   'motion programs (*.txt *.prg);;all files (*)')
        if path:
            self.presenter.load_file(path)

    def save_program(self) -> bool:
        """Write the program to its file (ask for one when it has none); return success."""
        if not self.presenter.source:
            return self.save_program_as()
        return self.presenter.save_file(self.presenter.source)

    def save_program_as(self) -> bool:
        """Ask for a file name and write the program; return success."""
        path = self.stops.ask_file('Save the motion program', self.presenter.source,
                                   'motion programs (*.txt *.prg);;all files (*)', save=True,
                                   suffix='txt')
        return bool(path) and self.presenter.save_file(path)

    def run_command(self) -> None:
        """Run the typed command; keep it in the field when refused."""
        if self.presenter.run_line(self.command_line.text()):
            self.command_line.clear()

    def pump(self) -> None:
        """Hand the adapters' events to the presenter and let it tick (the timer calls it)."""
        if self.events is not None:
            for event in self.events():
                self.presenter.handle(event)
        self.presenter.tick()

    def _keep_or_give_up_edits(self, what: str) -> bool:
        """Ask Save / Discard / Cancel about unsaved edits; return whether to go on."""
        p = self.presenter
        if not p.modified:
            return True
        name = os.path.basename(p.source) if p.source else 'The untitled program'
        answer = ask_about_unsaved(self.stops, name, f'Save them before you {what}?')
        if answer == QMessageBox.Save:
            return self.save_program()
        return answer == QMessageBox.Discard

    def closeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Stop what moves first (the robot holds there); then ask about unsaved edits; close."""
        if self.stops.leaving:          # SIGTERM: the work is backed up, nothing is asked
            self._timer.stop()
            self._view_timer.stop()
            super().closeEvent(event)
            return
        if not self.stops.may_close() or not self._keep_or_give_up_edits('close'):
            event.ignore()
            return
        if self.presenter.modified:   # Discard: given up on purpose, not to be offered again
            self.presenter.discard_changes()
        self.presenter.closing()
        if self.presenter.busy or self.presenter.manual is not None:
            self.presenter.stop()
            if self.events is not None:
                for update in self.events():
                    self.presenter.handle(update)
        self._timer.stop()
        self._view_timer.stop()
        super().closeEvent(event)

    # --- redrawing -----------------------------------------------------------------------------

    def _enable(self) -> None:
        p = self.presenter
        runs = p.can('run')
        for button in (self.run_button, self.step_button):
            button.setEnabled(runs)
        self.resume_button.setEnabled(p.can('resume'))
        self.check_button.setEnabled(p.parse_error is None and bool(p.steps))
        self.home_button.setEnabled(p.can('home'))
        self.jog_panel.set_enabled(p.can('jog'))
        self.target_panel.solve_button.setEnabled(p.connected)
        self.target_panel.move_button.setEnabled(p.target is not None and p.can('home'))
        self.clamp_button.setEnabled(p.can('gripper'))
        self.release_button.setEnabled(p.can('gripper'))
        self.command_button.setEnabled(p.connected and p.job is None)
        for slider in self.sliders.sliders.values():
            slider.setEnabled(p.can('sliders'))
        self.open_button.setEnabled(p.job is None or p.job.kind != 'program')
