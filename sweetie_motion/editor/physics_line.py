"""
The editor's physics line: Simulate the table, its verdict, Show to its findings (Qt).

**Simulate** (a toggle) plays the table on the robot in the physics engine in a worker thread
(:class:`~sweetie_motion.editor.table_simulation.TableSimulator`), now and after every edit
while it is on; the line says whether the pony stays up or falls (and when), which servo holds
its stall torque and which hoof slips; **Show** moves the play head to the next finding. The
window places the findings on the rows and the plot with the checks' and draws the pony where
the physics had it at the play head (:meth:`PhysicsLine.base_at`).
"""

from typing import Any, List, Optional, Tuple

import numpy as np
from PyQt5.QtWidgets import QHBoxLayout, QWidget
from sweetie_motion.editor.table_checks import RowFinding
from sweetie_motion.editor.table_simulation import TableSimulation, TableSimulator
from sweetie_motion.gui.widgets import ElidedLabel, push_button
from sweetie_motion.trajectory.waypoints import WaypointsList


class PhysicsLine(QWidget):
    """
    Simulate, the physics' verdict on the table, Show.

    :param model: the configured RobotModel (its ``physics:`` settings).
    """

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.simulator = TableSimulator(model)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.simulate_button = push_button(
            'Simulate', 'simulate_button', 'play the table on the robot in the physics engine '
            '(on a floor, the servos as the servo model has them): does it fall, does a servo '
            'hold its stall torque, does a hoof slip? On: again after every edit')
        self.simulate_button.setCheckable(True)
        # a long verdict is elided, the whole of it in the tooltip
        self.label = ElidedLabel('physics: not simulated (Simulate)', 'physics_label')
        self.show_button = push_button('Show', 'physics_show', 'move the play head to the '
                                       'next finding of the simulation')
        self.show_button.setEnabled(False)
        layout.addWidget(self.simulate_button)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.show_button)
        self._table_key: Any = None
        self.destroyed.connect(self.simulator.close)

    @property
    def on(self) -> bool:
        """Return whether Simulate is on."""
        return self.simulate_button.isChecked()

    def request(self, waypoints: WaypointsList, interpolation: str, name: str) -> None:
        """Simulate the table as it is now (a newer table replaces a waiting one)."""
        if self.simulator.request(waypoints, interpolation, name or 'the table'):
            text = self.label.text()
            if not text.endswith('(simulating...)'):
                self.label.setText(f'{text} (simulating...)')

    def take(self) -> Optional[TableSimulation]:
        """Show a finished simulation if one came; return it (None: none)."""
        result = self.simulator.poll()
        if result is None:
            return None
        findings = result.findings
        refused = any(f.finding.severity == 'refuse' for f in findings)
        color = '#c00000' if refused else '#b06000' if findings or result.error else '#207020'
        self.label.setText(result.summary())
        self.label.setStyleSheet(f'color: {color}')
        self.label.setToolTip('\n'.join(f.describe() for f in findings) or result.summary())
        self.show_button.setEnabled(bool(findings))
        return result

    def findings(self, key: Any) -> List[RowFinding]:
        """Return the newest simulation's findings if it is of the table ``key`` (else none)."""
        result = self.simulator.result
        return list(result.findings) if result is not None and result.key == key else []

    def base_at(self, key: Any, table_time: Optional[float]
                ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Return the simulated base (rotation, position [m]) at a table time, or None."""
        result = self.simulator.result
        if result is None or result.key != key or table_time is None:
            return None
        return result.base_at(table_time)
