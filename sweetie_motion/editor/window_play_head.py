"""
The editor window's play head: a slider over the motion's time that poses the robot view.

A part of :class:`~sweetie_motion.editor.window.EditorWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

from typing import Optional

from PyQt5.QtWidgets import QWidget
from sweetie_motion.editor.play_head import PlayHead
from sweetie_motion.gui.widgets import push_button, with_timeline

#: positions of the play head's slider over the active rows' span
PLAY_HEAD_STEPS = 1000


class PlayHeadControls:
    """
    The editor window's play head.

    The play head: scrub through the motion's time, go Live (the robot's pose), and keep the
    head within the active rows' span.

    A mixin of :class:`~sweetie_motion.editor.window.EditorWindow`.
    """

    def show_time(self, time: float) -> None:
        """Put the play head at table time ``time`` [s] (clipped to the active rows' span)."""
        span = self._play_head.span(self.presenter.waypoints)
        if span is None:
            return
        first, last = span
        fraction = (time - first) / (last - first) if last > first else 0.0
        value = int(round(min(max(fraction, 0.0), 1.0) * PLAY_HEAD_STEPS))
        if value == self.play_head_slider.value():
            self._scrub(value)
        else:
            self.play_head_slider.setValue(value)   # scrubs
        # the slider's steps are coarser than a sample: the exact time
        self.play_head_time = min(max(time, first), last)
        self.play_head_label.setText(f't = {self.play_head_time:.2f} s')
        self.trajectory_plot.set_play_head(self.play_head_time)
        self._show_robot(force=True)

    def _build_play_head(self) -> QWidget:
        """Return the plot with the play head under it: a timeline over the active rows."""
        self._play_head = PlayHead()
        #: the play head's table time [s] (None: the 3D view shows the robot)
        self.play_head_time: Optional[float] = None
        self.live_button = push_button('Live', 'play_head_live', 'the 3D view shows the '
                                       'robot, also while a row is selected (the play head '
                                       'goes; a row clicked is shown again)')
        self.live_button.clicked.connect(self._go_live)
        pane, self.play_head_slider, self.play_head_label = with_timeline(
            self.trajectory_plot, 'play head', 'play_head', 'the play head: drag it to see the '
            'motion between the rows in the 3D view and on the plot', 't = 000.00 s',
            self.live_button)
        self.play_head_slider.setRange(0, PLAY_HEAD_STEPS)
        self.play_head_slider.valueChanged.connect(self._scrub)
        return pane

    def _scrub(self, value: int) -> None:
        span = self._play_head.span(self.presenter.waypoints)
        if span is None:
            return
        first, last = span
        self.play_head_time = first + (last - first) * value / PLAY_HEAD_STEPS
        self.play_head_label.setText(f't = {self.play_head_time:.2f} s')
        self.trajectory_plot.set_play_head(self.play_head_time)
        self._live = False
        if self.presenter.table.selected_row is not None:
            self.presenter.table.select([])   # the play head's pose, not a row's
        self._show_robot(force=True)

    def _go_live(self) -> None:
        """Show the robot in the 3D view: no play head, and not the selected row."""
        self._live = True
        self._end_scrub()

    def _slider_moved(self, joint: str, value: float) -> object:
        """Move the robot as a person asks: the 3D view shows the robot, not the row."""
        if not self._live:
            self._live = True
            self._end_scrub()
        return self.presenter.move_joint(joint, value)

    def _selection_shown(self) -> None:
        """Show the rows the presenter selected (a click, Add pose) in the 3D view again."""
        self._live = False
        self._show_selection()

    def _end_scrub(self) -> None:
        self.play_head_time = None
        self.play_head_label.setText('')
        self.play_head_slider.blockSignals(True)
        self.play_head_slider.setValue(0)
        self.play_head_slider.blockSignals(False)
        self.trajectory_plot.set_play_head(None)
        self._show_robot(force=True)

    def _keep_play_head_in_span(self) -> None:
        """Keep the play head within the active rows after an edit (it goes with them)."""
        if self.play_head_time is None:
            return
        span = self._play_head.span(self.presenter.waypoints)
        if span is None:
            self._end_scrub()
            return
        first, last = span
        self.play_head_time = min(max(self.play_head_time, first), last)
        fraction = (self.play_head_time - first) / (last - first) if last > first else 0.0
        self.play_head_slider.blockSignals(True)
        self.play_head_slider.setValue(int(round(fraction * PLAY_HEAD_STEPS)))
        self.play_head_slider.blockSignals(False)
        self.play_head_label.setText(f't = {self.play_head_time:.2f} s')
        self.trajectory_plot.set_play_head(self.play_head_time)
