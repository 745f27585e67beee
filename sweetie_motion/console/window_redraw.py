"""
The console window's redrawing: what each of the presenter's topics redraws.

A part of :class:`~sweetie_motion.console.window.ConsoleWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

import os
import time
from typing import Callable, Dict

import numpy as np
from PyQt5.QtGui import QFontDatabase
from sweetie_motion.console.program_text import preview_text
from sweetie_motion.console.target import compact_joints, picked_target, target_text
from sweetie_motion.console.views import lamp, parts_text


class ConsoleRedraw:
    """
    The console window's views of the presenter's state.

    What each of the presenter's topics redraws: the state, the links, the sliders, the jog,
    the target, the program, the job, the plan and its preview, the status and the message.

    A mixin of :class:`~sweetie_motion.console.window.ConsoleWindow`.
    """

    def _changed(self, topic: str) -> None:
        views: Dict[str, Callable[[], None]] = {
            'state': self._show_state, 'links': self._show_links,
            'sliders': self._show_sliders, 'jog': self._show_jog,
            'program': self._show_program, 'job': self._show_job, 'plan': self._show_plan,
            'message': self._show_message, 'target': self._show_target}
        views[topic]()

    def _show_state(self) -> None:
        p = self.presenter
        for row, (_, text) in enumerate(p.joint_rows()):
            self.joint_table.item(row, 1).setText(text)
        self.tool_label.setText(p.tool_text())
        state = p.gripper_state or 'unknown'
        if not p.links['gripper']:
            state += ' (not connected)'
        self.gripper_label.setText(f'gripper: {state}')
        self._show_sliders_state()
        tool = p.tool_pose()
        self.robot_view.set_pose(p.pose, None if tool is None else tool.position,
                                 'joint_states' if p.connected else
                                 'joint_states (disconnected: the last pose)')

    def _show_sliders_state(self) -> None:
        p = self.presenter
        self.sliders.show_state(p.pose, {j: p.slider_target(j) for j in p.slider_joints},
                                p.joint_speed)

    def _show_links(self) -> None:
        p = self.presenter
        text, style = lamp(p.connected, f'motion process {self.where}'.rstrip())
        self.connection_label.setText(text)
        self.connection_label.setStyleSheet(style)
        self.parts_label.setText(parts_text(p.link_rows()))
        self._show_state()
        self._enable()

    def _show_sliders(self) -> None:
        p = self.presenter
        if p.slider_chain != self._shown_chain:
            self._shown_chain = p.slider_chain
            self.sliders.show_joints(p.slider_chain, p.slider_joints)
        self._show_sliders_state()

    def _show_jog(self) -> None:
        p = self.presenter
        self.jog_panel.show_settings(p.jog_frame, p.translation_step, p.rotation_step,
                                     p.translation_speed, p.rotation_speed)

    def _show_target(self) -> None:
        p = self.presenter
        target = p.target
        self.robot_view.set_ghost(None if target is None else
                                  dict(zip(target.joints, target.positions)))
        result = self.target_panel.result
        result.setText('' if target is None else compact_joints(target, p.model))
        result.setToolTip('' if target is None else target.describe(p.model))
        result.setVisible(target is not None)   # no empty line under the pose
        self._enable()

    def _fill_current_target(self) -> None:
        # the typed form of the pose the console shows: x y z [mm] A B C [deg]
        pose = self.presenter.tool_pose()
        if pose is not None:
            self.target_panel.text.setText(target_text(pose))

    def _pick_target(self, pixel: np.ndarray) -> None:
        # a shift+click in the 3D view: the point there at the depth of the target shown (or
        # of the tool), with the typed orientation, solved as a typed target is
        p = self.presenter
        tool = p.tool_pose()
        if tool is None:
            p.say('target: no joint_states yet: is the motion process running?', 'error')
            return
        depth = p.target.pose.position if p.target is not None else tool.position
        position = self.robot_view.unproject(float(pixel[0]), float(pixel[1]), depth)
        text = target_text(picked_target(position, self.target_panel.text.text(), tool))
        self.target_panel.text.setText(text)
        p.preview_target(text)

    def _show_title(self) -> None:
        p = self.presenter
        name = os.path.basename(p.source) if p.source else 'untitled'
        where = f' - {self.where}' if self.where else ''
        self.setWindowTitle(f'{name}[*] - sweetie-motion console{where}')
        self.setWindowModified(p.modified)

    def _show_program(self) -> None:
        p = self.presenter
        self._show_title()
        if self.editor.toPlainText() != p.text:
            self.editor.setPlainText(p.text)
        self.editor.setReadOnly(p.job is not None and p.job.kind == 'program')
        self.editor.show_lines(p.running_line, p.next_line or p.resume_line,
                               p.error_line if p.job is None else 0)
        self._show_status()
        self._enable()

    def _show_job(self) -> None:
        p = self.presenter
        job = p.job
        if job is not None and self.robot_view.ghost is not None:
            # the robot itself moves now: no dashed preview or target beside it
            self.robot_view.set_ghost(None)
            self.preview_slider.blockSignals(True)
            self.preview_slider.setValue(0)
            self.preview_slider.blockSignals(False)
            self.preview_label.setText('')
        if job is None:
            self.job_label.setText(f'next: line {p.next_line}' if p.next_line else
                                   f'stopped: Resume goes on at line {p.resume_line}'
                                   if p.resume_line else 'idle')
        else:
            where = f' - line {job.line}' if job.line else ''
            self.job_label.setText(f'{"stopping " if job.stopping else ""}'
                                   f'{job.description}{where}')
        self._show_program()

    def _show_plan(self) -> None:
        plan = self.presenter.plan
        if plan is None:
            self.robot_view.set_path(None, None)
        else:
            self.robot_view.set_path(plan.tool, plan.waypoints)
        samples = 0 if plan is None else len(plan.positions)
        self.preview_slider.blockSignals(True)
        self.preview_slider.setRange(0, max(samples - 1, 0))
        self.preview_slider.setValue(0)
        self.preview_slider.blockSignals(False)
        self.preview_slider.setEnabled(samples > 1)
        self.preview_label.setText('')
        self._show_status()

    def _preview(self, index: int) -> None:
        """Show the checked program's motion at sample ``index``: the robot there, dashed."""
        p = self.presenter
        plan = p.plan
        if plan is None or not 0 <= index < len(plan.positions):
            return
        self.robot_view.set_ghost(dict(zip(p.joints, plan.positions[index])))
        self.robot_view.redraw()
        self.preview_label.setText(preview_text(plan, index))

    def _show_status(self) -> None:
        text, level = self.presenter.program_status()
        self.status_label.setText(text)
        self.status_label.setFont(QFontDatabase.systemFont(
            QFontDatabase.FixedFont if self.presenter.parse_error is not None else
            QFontDatabase.GeneralFont))
        self.status_label.setStyleSheet('color: #c00000' if level == 'error' else '')

    def _show_message(self) -> None:
        message = self.presenter.message
        self.message_label.show_message(message.text, message.level)
        stamp = time.strftime('%H:%M:%S')
        self.message_log.appendPlainText(f'{stamp} {message.level:7s} {message.text}')
