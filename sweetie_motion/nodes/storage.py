"""
The trajectory_storage node: trajectories as BYTE_ARRAY parameters, mirrored to YAML files.

Each trajectory is the parameter ``<trajectory_namespace>.<name>`` (default
``joint_trajectory.<name>``) holding a serialized control_msgs FollowJointTrajectory Goal, so
``ros2 param get/set/dump/load/delete`` work on it. Every accepted change is first written to
its YAML file atomically: a set that succeeded is on disk. Invalid names, values that are not
goals and invalid goals are refused with the reason; built-in (library) trajectories can be
overridden but not deleted.
"""

import hashlib
from pathlib import Path
from typing import Any, List, Mapping

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter
from sweetie_motion.errors import did_you_mean, SweetieMotionError
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.parameters import ParameterSpec
from sweetie_motion.paths import config_path
from sweetie_motion.physics.judge import VERDICTS_NAME
from sweetie_motion.ros.conversions import byte_array_value, goal_from_bytes, goal_to_bytes
from sweetie_motion.storage.store import TrajectoryStore
from sweetie_motion.trajectory.codec import check_name
from sweetie_motion.trajectory.validation import check_structure, validate_goal

DEFAULT_STORAGE_DIR = '~/.local/share/sweetie_motion/trajectories'


def _message_format() -> str:
    """Name the serialized form of a goal: it changes with the message definitions."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    fields = [t.get_fields_and_field_types() for t in (
        FollowJointTrajectory.Goal, JointTrajectory, JointTrajectoryPoint, JointTolerance)]
    return 'cdr-' + hashlib.sha1(repr(fields).encode()).hexdigest()[:12]


#: the load cache keeps each trajectory serialized, as its parameter holds it
SERIALIZED = _message_format()


class TrajectoryStorageNode(ManagedNode):
    """The parameter server of stored trajectories (R-STORE-1/2/4)."""

    PARAMETERS = (
        ParameterSpec('storage_dir', DEFAULT_STORAGE_DIR,
                      'Folder of the saved trajectories (one YAML file each).', read_only=True),
        ParameterSpec('library_dirs', [str(config_path('trajectories'))],
                      'Read-only folders of built-in trajectories, loaded first.',
                      read_only=True, array_of=str),
        ParameterSpec('trajectory_namespace', 'joint_trajectory',
                      'Parameter namespace of the trajectories.', read_only=True),
    )

    def __init__(self, process=None, name: str = 'trajectory_storage', **kwargs) -> None:
        self.process = process
        super().__init__(name, allow_undeclared_parameters=True, **kwargs)
        self.store = None
        self.prefix = ''
        self.add_on_set_parameters_callback(self._on_set)

    def accepts_parameter(self, name: str) -> bool:
        return bool(self.prefix) and name.startswith(self.prefix)

    @classmethod
    def accepts_config_name(cls, name: str, parameters: Mapping[str, Any]) -> bool:
        """Return whether a process config may give this node ``name``: a stored trajectory."""
        prefix = str(parameters.get('trajectory_namespace', 'joint_trajectory')) + '.'
        return name.startswith(prefix)

    def configure_component(self) -> None:
        ns = self.get_parameter('trajectory_namespace').value
        check_name(ns)
        self.prefix = ns + '.'
        values = self.read_parameters()
        self.store = TrajectoryStore(values['storage_dir'], values['library_dirs'])
        report = self.store.load()
        for problem in report.problems:
            self.get_logger().warning(problem)
        if report.removed_temporaries:
            self.get_logger().info(
                f'removed {len(report.removed_temporaries)} temporary file(s) of an '
                'interrupted save')
        self._publishing = True
        try:
            for name in report.loaded:
                parameter = self.prefix + name
                value = byte_array_value(self._serialized(name))
                if self.has_parameter(parameter):
                    self.set_parameters([Parameter(parameter, Parameter.Type.BYTE_ARRAY,
                                                   value)])
                else:
                    self.declare_parameter(parameter, value, self._descriptor(name))
        finally:
            self._publishing = False
        self.store.write_cache()
        judge = self.process.judge() if self.process is not None else None
        if judge is not None:
            # the physics' verdicts are kept beside the saved trajectories, by content
            self.process.physics_log = self.get_logger().info
            judge.use_file(Path(self.store.directory) / VERDICTS_NAME)
        self.get_logger().info(
            f'{len(report.loaded)} trajectories from {self.store.directory}'
            + (f' and {len(self.store.library)} library folder(s)' if self.store.library
               else '') + (f'; {len(report.problems)} problem(s)' if report.problems else ''))

    def _serialized(self, name: str) -> bytes:
        """Return the serialized goal of a loaded trajectory (from the load cache if there)."""
        blob = self.store.derived(name, SERIALIZED)
        if blob is None:
            blob = goal_to_bytes(self.store.get(name))
            self.store.put_derived(name, SERIALIZED, blob)
        return blob

    def cleanup_component(self) -> None:
        self.store = None

    @staticmethod
    def _descriptor(name: str) -> ParameterDescriptor:
        # dynamic typing: a trajectory can be deleted (ros2 param delete)
        return ParameterDescriptor(description=f'trajectory {name!r}: a serialized '
                                   'control_msgs FollowJointTrajectory goal',
                                   dynamic_typing=True)

    def _on_set(self, parameters: List[Parameter]) -> SetParametersResult:
        if getattr(self, '_publishing', False) or not self.prefix:
            return SetParametersResult(successful=True)
        # check every parameter first: a refused (atomic) set must write nothing
        changes = []
        for parameter in parameters:
            if not parameter.name.startswith(self.prefix):
                if not self.has_parameter(parameter.name):
                    return self._refuse(parameter.name, 'unknown parameter: trajectories are '
                                        f'{self.prefix}<name>')
                continue
            try:
                changes.append(self._check(parameter.name[len(self.prefix):], parameter))
            except SweetieMotionError as error:
                return self._refuse(parameter.name, str(error))
        for name, goal in changes:
            try:
                self._apply(name, goal)
            except (SweetieMotionError, OSError) as error:
                return self._refuse(self.prefix + name, str(error))
        return SetParametersResult(successful=True)

    def _refuse(self, name: str, reason: str) -> SetParametersResult:
        self.get_logger().warning(f'refused {name}: {reason}')
        return SetParametersResult(successful=False, reason=reason)

    def _check(self, name: str, parameter: Parameter):
        """Return (name, goal or None for a delete) after checking everything."""
        check_name(name)
        if self.store is None:
            raise SweetieMotionError('trajectory_storage is not configured')
        if parameter.type_ == Parameter.Type.NOT_SET:
            if self.store.get(name) is None:
                raise SweetieMotionError(f'no trajectory named {name!r}'
                                         f'{did_you_mean(name, self.store.names())}')
            if self.store.is_library(name):
                raise SweetieMotionError(f'{name!r} is a built-in trajectory; it cannot be '
                                         'deleted')
            return name, None
        if parameter.type_ != Parameter.Type.BYTE_ARRAY:
            raise SweetieMotionError(
                f'{parameter.name} must be a byte array (a serialized FollowJointTrajectory '
                f'goal), got {parameter.type_.name}')
        goal = goal_from_bytes(b''.join(parameter.value))
        if self.process is not None:
            validate_goal(goal, self.process.view)  # joints of this robot, within limits
        else:
            check_structure(goal)
        return name, goal

    def _apply(self, name: str, goal) -> None:
        if goal is None:
            self.store.delete(name)
            self.get_logger().info(f'deleted trajectory {name!r}')
            if self.store.get(name) is not None:
                # it overrode a built-in, which shows again once the deletion is through
                self.call_soon(lambda: self._publish_library(name))
            return
        path = self.store.save(name, goal)
        self.get_logger().info(f'saved trajectory {name!r} ({len(goal.points)} points) to '
                               f'{Path(path).name}')
        judge = self.process.judge() if self.process is not None else None
        if judge is not None:
            judge.submit(name, goal)      # judged in the background: play need not wait

    def _publish_library(self, name: str) -> None:
        goal = self.store.get(name) if self.store is not None else None
        if goal is None or self.has_parameter(self.prefix + name):
            return
        self._publishing = True
        try:
            self.declare_parameter(self.prefix + name,
                                   byte_array_value(goal_to_bytes(goal)), self._descriptor(name))
        finally:
            self._publishing = False
        self.get_logger().info(f'{name!r} is the built-in trajectory again')
