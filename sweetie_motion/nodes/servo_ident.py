"""
The servo identification node (R-SERVO-2/3, seed 003 ``servo_ident``).

On the cycle side an observer feeds :class:`~sweetie_motion.servo.ident.ServoIdentification`
every tick with the reference sent to the servos and the bus's measurements (with their own
times). This node offers it to ROS:

- ``~/identification`` (sweetie_motion_msgs/srv/ServoIdentification): ``start`` (servos;
  refused while an identification runs), ``status``, ``end`` (keeps the models whose averaged
  prediction error is under ``threshold`` and whose values are physical, keeps the parameters
  the motion did not excite at their prior values, publishes every current model on
  ``servo_models`` and saves them to ``models_file``; fails, naming them, when a servo had no
  sample, stayed above the threshold or was refused), ``abort``;
- ``torque_error_sorted`` (sensor_msgs/JointState): the models' prediction error as torque
  (effort), every joint in RobotModel order, at ``torque_error_rate``;
- ``servo_models`` (sweetie_motion_msgs/ServoModels, latched): every servo's current model
  (the ones to start from, with each identification's results replacing theirs).

The models the identification starts from are ``models_file`` where it exists, else the
defaults of each servo's type in ``servos`` (the servo configuration of the bus).
"""

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from sensor_msgs.msg import JointState
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.nodes.lifecycle import ComponentNode
from sweetie_motion.nodes.motion_core import LATCHED
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterError, ParameterSpec
from sweetie_motion.servo.components import (
    AbortIdentification, EndIdentification, ReadControlDelays, ReadIdentProgress,
    ReadServoModels, ReadTorqueError, ServoIdentComponent, ServoIdentSpec, StartIdentification,
)
from sweetie_motion.servo.model_files import load_servo_models, save_servo_models
from sweetie_motion_msgs.msg import ServoModel, ServoModels
from sweetie_motion_msgs.srv import ServoIdentification

#: where identified models go by default (and where the next start takes them from)
DEFAULT_MODELS_FILE = '~/.local/share/sweetie_motion/servo_models.yaml'


class ServoIdentNode(ComponentNode):
    """The servo identification as a lifecycle node."""

    PARAMETERS = (
        ParameterSpec('control_delay', 2.5,
                      "Delay from the reference to the servo's desired position, as seen by "
                      'measurements stamped when the servo sampled them [cycles], for servos '
                      'whose bus does not know it (control_delay_from_bus); a wrong delay '
                      'shows as viscous friction (kp U per second of error).',
                      low=0.0, high=100.0),
        ParameterSpec('control_delay_from_bus', True,
                      "Each servo's control delay from its bus where it knows it: the HerkuleX "
                      "driver gives each line's from its schedule (goal interval, when the "
                      'S_JOG reaches the servos, the servo tick); lines of other sizes and '
                      'speeds have other delays. False: control_delay for every servo.'),
        ParameterSpec('relaxation_factor', 0.9995, 'RLS forgetting factor lambda (0, 1].',
                      low=1e-6, high=1.0),
        ParameterSpec('error_averaging_time', 2.0,
                      'Averaging time of the position prediction error [s].', low=0.01,
                      high=600.0),
        ParameterSpec('threshold', 0.01, 'Largest accepted RMS position prediction error of '
                      'an identified model [rad].', low=1e-6, high=1.0),
        ParameterSpec('battery_voltage', 7.4, 'Supply voltage of the servos [V].', low=1.0,
                      high=30.0),
        ParameterSpec('min_speed', 0.1, 'Slower samples are not used [rad/s].', low=0.0,
                      high=10.0),
        ParameterSpec('servos', 'sweetie_bot_servos.yaml',
                      'Servo configuration: the servo types whose default models the '
                      'identification starts from when models_file does not exist.',
                      read_only=True),
        ParameterSpec('models_file', DEFAULT_MODELS_FILE,
                      'Servo models: read at configure (if it exists), written by end().',
                      read_only=True),
        ParameterSpec('torque_error_rate', 10.0,
                      'Rate of torque_error_sorted [Hz]; 0: not published.', low=0.0,
                      high=200.0),
    )

    def __init__(self, process: MotionProcess, name: str = 'servo_ident', **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._group = MutuallyExclusiveCallbackGroup()

    def configure_component(self) -> None:
        from sweetie_motion.servo.ident import IdentConfig, IdentificationError
        values = self.read_parameters()
        models = load_servo_models(values['models_file'], values['servos'])
        joints = set(self.process.model.list_all_joints())
        models = [m for m in models if m.name in joints]
        try:
            config = IdentConfig(
                period=self.process.period, control_delay=values['control_delay'],
                relaxation_factor=values['relaxation_factor'],
                error_averaging_time=values['error_averaging_time'],
                threshold=values['threshold'], battery_voltage=values['battery_voltage'],
                min_speed=values['min_speed'])
        except IdentificationError as error:
            raise ParameterError(str(error)) from None
        self.create_component(ServoIdentComponent, ServoIdentSpec(
            config, tuple(models), bool(values['control_delay_from_bus'])))
        self._models_pub = self.make_publisher(ServoModels, 'servo_models', LATCHED)
        self._entities = [self._models_pub, self.create_service(
            ServoIdentification, '~/identification', self._identification,
            callback_group=self._group)]
        if values['torque_error_rate'] > 0:
            self._error_pub = self.make_publisher(JointState, 'torque_error_sorted', 10)
            self._entities += [self._error_pub, self.create_timer(
                1.0 / values['torque_error_rate'], self._publish_torque_error,
                callback_group=self._group)]
        self.get_logger().info(f'{len(models)} servo models to start from')

    def activate_component(self) -> None:
        super().activate_component()
        self._publish_models(self.host.run(ReadServoModels(self.get_name())))

    def _publish_torque_error(self) -> None:
        if not self._created or self.lifecycle_state != 'active':
            return
        try:
            error = self.host.run(ReadTorqueError(self.get_name()), timeout=1.0)
        except SweetieMotionError:
            return
        msg = JointState(name=self.process.model.list_all_joints(), effort=error.tolist())
        msg.header.stamp = self.get_clock().now().to_msg()
        self._error_pub.publish(msg)

    def _fill_status(self, response, progress) -> None:
        names = sorted(progress)
        response.servos = names
        response.samples = [int(progress[n].samples) for n in names]
        response.error = [float(progress[n].error) for n in names]
        response.identified = [bool(progress[n].converged) for n in names]
        response.alpha = [float(a) for n in names for a in progress[n].alpha]

    def _identification(self, request, response):
        command = request.command.strip().lower()
        name = self.get_name()
        try:
            if self.lifecycle_state != 'active':
                raise SweetieMotionError(f'{name} is not active ({self.lifecycle_state})')
            if command == 'start':
                servos = self.host.run(StartIdentification(name, list(request.servos)))
                delays = describe_delays(self.host.run(ReadControlDelays(name, servos)))
                response.message = (f'identifying {len(servos)} servo(s): {", ".join(servos)}'
                                    f'; control delay {delays}')
                self._fill_status(response, self.host.run(ReadIdentProgress(name)))
            elif command == 'status':
                progress = self.host.run(ReadIdentProgress(name))
                self._fill_status(response, progress)
                response.message = (f'{sum(p.converged for p in progress.values())} of '
                                    f'{len(progress)} servo(s) under the threshold')
            elif command == 'end':
                progress = self.host.run(ReadIdentProgress(name))
                result = self.host.run(EndIdentification(name))
                self._fill_status(response, progress)
                # what end() decided, not the convergence: a refused servo converged too
                response.identified = [n in result.names for n in response.servos]
                response.outcome = [result.outcome(n) for n in response.servos]
                known = self.host.run(ReadServoModels(name))
                self._publish_models(known)
                saved = save_servo_models(self.get_parameter('models_file').value, known) \
                    if result.models else ''
                response.message = result.describe() + (f'; saved to {saved}' if saved else '')
                if not result.complete:
                    response.success = False
                    self.get_logger().warning(f'identification end: {response.message}')
                    return response
            elif command == 'abort':
                servos = self.host.run(AbortIdentification(name))
                response.message = (f'aborted ({len(servos)} servo(s)): no model changed'
                                    if servos else 'no identification was running')
            else:
                raise SweetieMotionError(f'unknown command {request.command!r} (start, '
                                         'status, end, abort)')
        except SweetieMotionError as error:
            response.success, response.message = False, str(error)
            self.get_logger().warning(f'identification {command}: {error}')
            return response
        response.success = True
        self.get_logger().info(f'identification {command}: {response.message}')
        return response

    def _publish_models(self, models) -> None:
        msg = ServoModels()
        msg.header.stamp = self.get_clock().now().to_msg()
        for model in models:
            fields = model.to_fields()
            msg.models.append(ServoModel(name=fields['name'], kp=float(fields['kp']),
                                         kgear=float(fields['kgear']),
                                         alpha=[float(a) for a in fields['alpha']],
                                         qs=float(fields['qs'])))
        self._models_pub.publish(msg)


def describe_delays(delays) -> str:
    """
    Return the control delays in a few words: per line, its delay and its servos' count.

    :param delays: (line, delay [s]) per servo; line '' : the configured delay.
    """
    lines = {}
    for (line, delay) in delays:
        key = (line or 'configured', round(delay * 1e3, 1))
        lines[key] = lines.get(key, 0) + 1
    return ', '.join(f'{line} {ms:g} ms ({count} servo(s))' for (line, ms), count in lines.items())
