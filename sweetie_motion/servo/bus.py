"""
The cycle stages that connect a servo bus to the motion process: measurements in, references out.

The bus itself is an interface of the core (:class:`~sweetie_motion.core.servo_bus.ServoBus`);
the virtual robot, the serial driver and the physics robot implement it.
"""

import numpy as np

from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.servo_bus import ServoBus


class BusInput:
    """
    Cycle stage 'input': fills ``tick.measured`` from the bus.

    Virtual joints have no servo: their measured state is their reference.

    :param bus: the servo bus.
    :param bus_indices: canonical index of each bus joint.
    :param virtual_indices: canonical indices of the joints not on the bus.
    """

    name = 'servo_input'

    def __init__(self, bus: ServoBus, bus_indices: np.ndarray,
                 virtual_indices: np.ndarray) -> None:
        self.bus = bus
        self.bus_indices = np.asarray(bus_indices, dtype=np.intp)
        self.virtual_indices = np.asarray(virtual_indices, dtype=np.intp)

    def update(self, tick: Tick) -> None:
        """Read the bus into the tick's measured pose."""
        state = self.bus.receive(tick.now)
        measured = tick.measured
        measured.position[self.bus_indices] = state.position
        measured.velocity[self.bus_indices] = state.velocity
        measured.effort[self.bus_indices] = state.effort
        measured.position[self.virtual_indices] = tick.reference.position[self.virtual_indices]
        measured.velocity[self.virtual_indices] = tick.reference.velocity[self.virtual_indices]
        measured.stamp = state.stamp


class BusOutput:
    """Cycle stage 'output': sends the tick's aggregated reference to the bus."""

    name = 'servo_output'

    def __init__(self, bus: ServoBus, bus_indices: np.ndarray) -> None:
        self.bus = bus
        self.bus_indices = np.asarray(bus_indices, dtype=np.intp)

    def update(self, tick: Tick) -> None:
        """Send the reference of the bus joints."""
        self.bus.send(tick.now, tick.reference.position[self.bus_indices],
                      tick.reference.velocity[self.bus_indices])
