"""
The trajectory controller node's parameters and the cheap checks of a goal message they set.

What :class:`~sweetie_motion.nodes.trajectory.JointTrajectoryNode` declares (its own, and
the read-only ones joint_trajectory_controller's tools read) and what a goal message must keep
to before it is converted: its points, joints, duration and size.
"""

from typing import Any, List, Mapping, Optional

from control_msgs.action import FollowJointTrajectory
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sweetie_motion.controllers.goals import GoalPlanner
from sweetie_motion.model.robot_model import RobotModelView
from sweetie_motion.nodes.controllers import controller_parameters
from sweetie_motion.nodes.rclpy_private import set_own_value
from sweetie_motion.parameters import nested_overrides, ParameterError, ParameterSpec
from sweetie_motion.ros.conversions import duration_to_seconds
from sweetie_motion.trajectory.codec import check_name, TrajectoryFileError
from sweetie_motion.trajectory.spline import INTERPOLATIONS
from sweetie_motion.trajectory.timing import POLICIES
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import GoalError, ResultCode


def _name_problem(name: str) -> Optional[str]:
    try:
        check_name(name)
    except TrajectoryFileError as error:
        return str(error)
    return None


#: joint_trajectory_controller's read-only interface parameters, as this controller has them
JTC_COMMAND_INTERFACES = ('position',)
JTC_STATE_INTERFACES = ('position', 'velocity')

#: the parameters of a JointTrajectoryNode
TRAJECTORY_PARAMETERS = [p for p in controller_parameters(smoothing='transient')
                         if p.name != 'stay_operational'] + [
    ParameterSpec('interpolation', 'akima',
                  'Interpolation of position-only keyframes: akima (C1, no overshoot, '
                  'still between equal keyframes) or cubic (C2, may overshoot).',
                  choices=INTERPOLATIONS),
    ParameterSpec('constraints.path_tolerance', 0.3,
                  'Default path tolerance (position) [rad]; 0 = not checked.',
                  low=0.0, high=10.0),
    ParameterSpec('constraints.goal_tolerance', 0.05,
                  'Default goal tolerance (position) [rad]; 0 = not checked.',
                  low=0.0, high=10.0),
    ParameterSpec('constraints.goal_time', 1.0,
                  'Default time allowed after the end to reach the goal [s].',
                  low=0.001, high=600.0),
    ParameterSpec('limits.max_points', 50000,
                  'Goals with more points are refused (INVALID_GOAL) before any work.',
                  low=2, high=10_000_000),
    ParameterSpec('limits.max_duration', 3600.0,
                  'Goals lasting longer are refused (INVALID_GOAL) [s].',
                  low=0.01, high=1e6),
    ParameterSpec('limits.max_message_bytes', 64 * 1024 * 1024,
                  'Goals whose points hold more than this many bytes of values are '
                  'refused (INVALID_GOAL).', low=1024, high=2**31 - 1),
    ParameterSpec('limits.policy', 'retime',
                  'A goal needing more velocity or acceleration than the joint limits: '
                  'retime (slowed down by the smallest factor that fits; the result '
                  'message says so) or refuse (INVALID_GOAL naming the joint, the time, '
                  'the needed and the allowed value). Applies to the next goal.',
                  choices=POLICIES, dynamic=True),
    ParameterSpec('feedback_rate', 20.0, 'Rate of action feedback [Hz].',
                  low=1.0, high=200.0),
    ParameterSpec('result_timeout', 10.0,
                  'How long a finished goal stays known to the action server [s]: every '
                  'status message lists them all, and clients slow down with thousands. '
                  'Clients ask for the result right away (rclpy, MoveIt, the editor).',
                  read_only=True, low=1.0, high=3600.0),
    ParameterSpec('play_action', '',
                  'Name of the play-by-name action (sweetie_motion_msgs/PlayTrajectory), '
                  'relative to the robot namespace; empty: none.', read_only=True),
    ParameterSpec('storage_node', 'trajectory_storage',
                  'The trajectory_storage node that play_action loads from.'),
    ParameterSpec('trajectory_namespace', 'joint_trajectory',
                  'Parameter namespace of the stored trajectories.'),
    ParameterSpec('record_as', '',
                  'If set, every accepted FollowJointTrajectory goal is also stored under '
                  'this name (e.g. to keep what MoveIt planned).', dynamic=True,
                  check=lambda name: _name_problem(name) if name else None),
    ParameterSpec('support_topic', 'support_state',
                  'Topic of SupportState from support/<chain> pseudo-joints.',
                  read_only=True),
    ParameterSpec('state_publish_rate', 25.0,
                  'Rate of ~/controller_state [Hz] while someone subscribes; 0: never.',
                  low=0.0, high=200.0),
]


def declare_jtc_parameters(node: Node, joints: List[str]) -> None:
    """
    Declare on ``node`` what joint_trajectory_controller's tools read (rqt_jtc, ros2 control).

    ``joints`` (the joints of ``controlled_chains``, in the controller's order: what goals
    may name, what ``~/controller_state`` lists, what the controller manager reports),
    ``command_interfaces`` ([position]) and ``state_interfaces`` ([position, velocity]),
    all read-only as in JTC. ``joints`` follows ``controlled_chains`` at each configure.
    """
    for name, value, text in (
            ('joints', joints,
             "joint_trajectory_controller's joints: the joints of controlled_chains, in "
             "the controller's order (set it through controlled_chains)."),
            ('command_interfaces', list(JTC_COMMAND_INTERFACES),
             'The joint interfaces it commands (position references).'),
            ('state_interfaces', list(JTC_STATE_INTERFACES),
             'The joint interfaces it reads (measured position and velocity).')):
        # what the node derives: no override (a params file's /** say) can change it
        node.declare_parameter(name, value or Parameter.Type.STRING_ARRAY,
                               ParameterDescriptor(name=name, description=text,
                                                   read_only=True),
                               ignore_override=True)
        if not value:
            set_own_value(node, name, Parameter.Type.STRING_ARRAY, [])


def tolerance_defaults(values: Mapping[str, Any], constraints: Mapping[str, Any],
                       view: RobotModelView) -> ToleranceDefaults:
    """
    Return the default tolerances the parameters set.

    :param values: the node's parameter values (``constraints.path_tolerance``, ...).
    :param constraints: every ``constraints.*`` parameter, per-joint ones included.
    :raises ParameterError: a per-joint tolerance names an unknown joint.
    """
    _, per_joint, _ = nested_overrides(dict(constraints), 'constraints')
    unknown = [j for j in per_joint if view.get_joint_index(j) < 0]
    if unknown:
        raise ParameterError(f'constraints name unknown joints: {", ".join(unknown)}')
    # JTC's name of a joint's path tolerance wins over ours
    return ToleranceDefaults(values['constraints.path_tolerance'],
                             values['constraints.goal_tolerance'],
                             values['constraints.goal_time'],
                             {j: {('path' if k == 'trajectory' else k): float(v)
                                  for k, v in sorted(p.items(), key=lambda i: i[0] ==
                                                     'trajectory')}
                              for j, p in per_joint.items()})


def check_goal_limits(goal: FollowJointTrajectory.Goal, values: Mapping[str, Any], name: str,
                      planner: GoalPlanner) -> None:
    """
    Refuse a FollowJointTrajectory goal message beyond the limits its parameters set, cheaply.

    :param values: the controller node's parameter values (``limits.*``).
    :param name: the controller's name (for messages).
    :param planner: the controller's planner (the joints it drives).
    :raises GoalError: naming the limit and its parameter.
    """
    points = goal.trajectory.points
    if len(points) > values['limits.max_points']:
        raise GoalError(ResultCode.INVALID_GOAL,
                        f'the trajectory has {len(points)} points; {name} accepts at most '
                        f'{values["limits.max_points"]} (parameter limits.max_points)')
    controlled = planner.controlled
    allowed = len(controlled.joints) + len(controlled.chains)
    names = goal.trajectory.joint_names
    if len(names) > allowed:
        raise GoalError(ResultCode.INVALID_JOINTS,
                        f'the trajectory names {len(names)} joints; {name} drives '
                        f'{len(controlled.joints)} joints and {len(controlled.chains)} '
                        'support flags')
    if points:
        duration = duration_to_seconds(points[-1].time_from_start)
        if duration > values['limits.max_duration']:
            raise GoalError(ResultCode.INVALID_GOAL,
                            f'the trajectory lasts {duration:.1f} s; {name} accepts at '
                            f'most {values["limits.max_duration"]:g} s (parameter '
                            'limits.max_duration)')
    size = 8 * sum(len(p.positions) + len(p.velocities) + len(p.accelerations)
                   + len(p.effort) + 1 for p in points)
    if size > values['limits.max_message_bytes']:
        raise GoalError(ResultCode.INVALID_GOAL,
                        f'the trajectory holds {size} bytes of values; {name} accepts at '
                        f'most {values["limits.max_message_bytes"]} (parameter '
                        'limits.max_message_bytes)')
