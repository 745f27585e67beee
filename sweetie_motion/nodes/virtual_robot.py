"""
The virtual robot node: installs the simulated servo bus into the motion process (R-SYS-5).

``~/move_by_hand`` (sensor_msgs/JointState) moves servos whose torque is off, as a person
posing the robot would; servos with torque on resist. The dynamic parameter ``blocked_joints``
jams servos to make tolerance violations real.
"""

from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.nodes.lifecycle import ComponentNode
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterSpec, unique
from sweetie_motion.servo.components import (
    MoveByHand, SetBlocked, VirtualRobotComponent, VirtualRobotSpec,
)


class VirtualRobotNode(ComponentNode):
    """The simulated servo bus as a lifecycle node."""

    PARAMETERS = (
        ParameterSpec('lag', 0.05, 'Time constant of the simulated servos position loop [s].',
                      low=0.001, high=5.0),
        ParameterSpec('delay', 1, 'Command delay of the simulated servos [cycles].',
                      low=0, high=100),
        ParameterSpec('max_velocity', 6.0,
                      'Top speed of the simulated servos [rad/s] (a HerkuleX DRS-0101 turns '
                      'about 7 rad/s unloaded); 0 = the URDF velocity limits.',
                      low=0.0, high=100.0),
        ParameterSpec('blocked_joints', [], 'Joints whose servos are jammed (they stop '
                      'moving), to test tolerance handling. Changes apply at once.',
                      dynamic=True, check=unique, array_of=str),
    )

    def __init__(self, process: MotionProcess, name: str = 'virtual_robot', **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self.add_on_set_parameters_callback(self._on_set)

    def configure_component(self) -> None:
        values = self.read_parameters()
        self.create_component(VirtualRobotComponent, VirtualRobotSpec(
            values['lag'], values['delay'], values['max_velocity'],
            tuple(values['blocked_joints'])))
        self._entities = [self.make_subscription(JointState, '~/move_by_hand',
                                                 self._move_by_hand, 10)]

    def _move_by_hand(self, msg: JointState) -> None:
        positions = self.hand_pose(msg)
        if positions is None:
            return
        if self._created:
            self.host.cast(MoveByHand(self.get_name(), positions))

    def _on_set(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'blocked_joints' and self._created:
                try:
                    self.host.run(SetBlocked(self.get_name(), list(parameter.value or [])))
                except SweetieMotionError as error:
                    return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)
