"""
The virtual robot node: installs the simulated servo bus into the motion process (R-SYS-5).

``~/move_by_hand`` (sensor_msgs/JointState) moves servos whose torque is off, as a person
posing the robot would; servos with torque on resist. The dynamic parameter ``blocked_joints``
jams servos to make tolerance violations real.
"""

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from sweetie_motion.conversions import joint_state_positions
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterSpec, unique
from sweetie_motion.servo.bus import BusInput, BusOutput
from sweetie_motion.servo.virtual import VirtualServoBus


class VirtualRobotNode(ManagedNode):
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
        self.process = process
        super().__init__(name, **kwargs)
        self._entities = []
        self.bus = None
        self.add_on_set_parameters_callback(self._on_set)

    def configure_component(self) -> None:
        values = self.read_parameters()
        joints = self.process.servo_joints()
        view = self.process.view
        limits = view.velocity_limits()[view.get_joint_indices(joints)]
        if values['max_velocity'] > 0:
            limits = np.full(len(joints), values['max_velocity'])
        self.bus = VirtualServoBus(joints, limits, lag=values['lag'], delay=values['delay'])
        self._apply_blocked(values['blocked_joints'])
        self.process.bus = self.bus
        indices = view.get_joint_indices(joints)
        virtual = view.get_joint_indices(view.list_virtual_joints())
        self._input = BusInput(self.bus, indices, virtual)
        self._output = BusOutput(self.bus, indices)
        self._entities = [self.make_subscription(JointState, '~/move_by_hand',
                                                 self._move_by_hand, 10)]

    def activate_component(self) -> None:
        self.process.cycle.add_stage('input', self._input)
        self.process.cycle.add_stage('output', self._output)

    def deactivate_component(self) -> None:
        self.process.cycle.remove_stage(self._input)
        self.process.cycle.remove_stage(self._output)

    def cleanup_component(self) -> None:
        self.destroy_entities(self._entities)
        if self.process.bus is self.bus:
            self.process.bus = None
        self.bus = None

    def _move_by_hand(self, msg: JointState) -> None:
        try:
            positions = dict(zip(msg.name, joint_state_positions(msg)))
        except ValueError as error:
            self.get_logger().warning(f'move_by_hand ignored: {error}')
            return
        if self.bus is not None:
            self.bus.move_by_hand(positions)

    def _apply_blocked(self, joints) -> None:
        known = set(self.bus.joints)
        unknown = [j for j in joints if j not in known]
        if unknown:
            raise ValueError(f'blocked_joints: not servo joints: {", ".join(unknown)}')
        self.bus.block(self.bus.joints, False)
        self.bus.block(joints, True)

    def _on_set(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'blocked_joints' and self.bus is not None:
                try:
                    self._apply_blocked(list(parameter.value or []))
                except ValueError as error:
                    return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)
