"""
The motion core node: the life of the sync cycle, ownership and cycle diagnostics.

Active = the cycle runs. ``joint_states`` (measured) and ``joint_states_ref`` (the
aggregated reference) come from the cycle's state board: published by a process of their own
(node ``cycle_state``) when the cycle is isolated, by a thread of this node otherwise. This
node publishes ``resource_owners`` (who drives what, latched), the cycle statistics on
``/diagnostics`` and, where no robot_state_publisher does, the URDF on ``robot_description``.
"""

import os
import socket
from typing import Dict, Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sweetie_motion.core.events import (
    CallFailed, CycleEvent, HostExited, OwnersChanged, SafetyLimited, StageFailed,
)
from sweetie_motion.host.client import HostClient, LocalHost
from sweetie_motion.nodes.description_publisher import DescriptionPublisher
from sweetie_motion.nodes.lifecycle import DIAGNOSTICS, ManagedNode
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.nodes.state_publisher import JointStatePublisher
from sweetie_motion.parameters import ParameterSpec
from sweetie_motion_msgs.msg import ResourceOwnership

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def running_process() -> str:
    """Return 'host HOST, pid PID' of this process."""
    return f'host {socket.gethostname()}, pid {os.getpid()}'


class MotionCoreNode(ManagedNode):
    """The node that owns the cycle's life: active = the cycle runs."""

    #: default SCHED_FIFO priority of the cycle thread
    CYCLE_PRIORITY = 50

    PARAMETERS = (
        ParameterSpec('period', 0.01, 'Sync cycle period [s] (set by the process config).',
                      read_only=True, low=0.0005, high=1.0),
        ParameterSpec('publish_rate', 100.0,
                      'Rate of joint_states and joint_states_ref [Hz]; at most the cycle rate.',
                      low=1.0, high=2000.0),
        ParameterSpec('diagnostics_period', 1.0, 'Period of the cycle diagnostics [s].',
                      low=0.05, high=60.0),
        ParameterSpec('cycle_priority', CYCLE_PRIORITY,
                      'SCHED_FIFO real-time priority of the cycle thread (the joint state '
                      'publisher runs one below); 0 = normal scheduling. Needs root, '
                      'CAP_SYS_NICE or an rtprio limit; without, the cycle runs normally and '
                      'the diagnostics say so.', read_only=True, low=0, high=98),
        ParameterSpec('robot_description_topics', ['robot_description', '/robot_description'],
                      "Latched topics (std_msgs/String) this node publishes the robot's URDF "
                      'on, each only if no other node (robot_state_publisher) publishes it '
                      "there; relative names are in the robot's namespace. "
                      'rqt_joint_trajectory_controller reads /robot_description.',
                      read_only=True),
    )

    def __init__(self, process: MotionProcess, name: str = 'motion', **kwargs) -> None:
        self.process = process
        super().__init__(name, **kwargs)
        # who runs this motion process: a second bringup in the namespace names it
        self.declare_parameter('process', running_process(), ParameterDescriptor(
            description='Host and pid of the motion process (read by a second bringup in '
                        'the same namespace, which refuses to start).', read_only=True))
        self._entities = []
        self._local_publisher = None
        self._last_lost = 0
        #: the deadline of the newest late tick already reported [s] (each is reported once)
        self._last_late = float('-inf')
        self._last_intervened = 0
        self.scheduling = 'not started'
        #: resource group -> the controller owning it ('' : free), as last reported
        self.owners: Dict[str, str] = {}
        self._description: Optional[DescriptionPublisher] = None

    @property
    def host(self) -> HostClient:
        """Return the client of the cycle host."""
        return self.process.host

    def configure_component(self) -> None:
        self.read_parameters()
        self.pub_owners = self.make_publisher(ResourceOwnership, 'resource_owners', LATCHED)
        self.pub_diag = self.make_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS)
        self.diag_timer = self.create_timer(self.values['diagnostics_period'],
                                            self._publish_diagnostics)
        self._entities = [self.pub_owners, self.pub_diag, self.diag_timer]
        if isinstance(self.host, LocalHost):
            # the cycle runs in this process: this node publishes the joint states
            writer = self.host.host.board_writer
            self._local_publisher = JointStatePublisher(
                self, self.process.model.list_all_joints(), writer.board,
                writer.wake_read_fd, writer.wake_fd)
            writer.board.unlink()  # nobody else maps it: the file is not needed
        self.host.add_listener(self._on_event)
        self._publish_owners(self.host.cycle().owners())
        self._description = DescriptionPublisher(self, self.values['robot_description_topics'],
                                                 self.process.model.urdf_document())

    def activate_component(self) -> None:
        self.scheduling = self.host.cycle().start_cycle(self.values['publish_rate'],
                                                        self.values['cycle_priority'])
        if self._local_publisher is not None:
            self._local_publisher.start()
        where = 'a process of its own' if self.host.isolated else 'this process'
        self.get_logger().info(f'sync cycle started in {where} (pid {self.host.pid}), '
                               f'{self.scheduling}')

    def deactivate_component(self) -> None:
        self.host.cycle().stop_cycle()
        if self._local_publisher is not None:
            self._local_publisher.stop()

    def cleanup_component(self) -> None:
        self.host.remove_listener(self._on_event)
        if self._description is not None:
            self._description.destroy()
            self._description = None
        if self._local_publisher is not None:
            self._local_publisher.destroy()
            self._local_publisher = None
        self.destroy_entities(self._entities)

    # --- events of the cycle side --------------------------------------------------------------

    def _on_event(self, event: CycleEvent) -> None:
        if isinstance(event, OwnersChanged):
            self._publish_owners(event.owners)
        elif isinstance(event, StageFailed):
            self.get_logger().error(f'cycle stage {event.stage} failed ({event.count} times): '
                                    f'{event.text}')
        elif isinstance(event, SafetyLimited):
            self.get_logger().warning(event.text)
        elif isinstance(event, CallFailed):
            self.get_logger().warning(f'{event.command} of {event.target or "the cycle host"} '
                                      f'failed: {event.text}')
        elif isinstance(event, HostExited):
            self.get_logger().fatal(f'the cycle process ended (exit code {event.code}): the '
                                    'robot is not driven any more')

    def _safety_status(self, report) -> DiagnosticStatus:
        """Describe what the safety stage changed: WARN while it intervenes."""
        status = DiagnosticStatus(name=f'{self.get_namespace().strip("/")}: safety stage',
                                  hardware_id='sweetie_motion')
        new = report.intervened - self._last_intervened
        self._last_intervened = report.intervened
        status.level = DiagnosticStatus.WARN if new else DiagnosticStatus.OK
        status.message = (f'limited the reference in {new} ticks since the last report '
                          f'(last: {report.last})' if new else
                          f'every reference within the joint limits ({report.intervened} '
                          'corrected ticks since the start)')
        values = [('ticks', report.ticks), ('intervened', report.intervened),
                  ('last', report.last)]
        values += [(f'joint {j}', n) for j, n in sorted(report.joints.items())]
        values += [(f'controller {c or "(none)"}', n)
                   for c, n in sorted(report.controllers.items())]
        values += [(f'jerk excess {j}', n) for j, n in sorted(report.jerk_excess.items())]
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values]
        return status

    def _publish_owners(self, owners) -> None:
        self.owners = dict(owners)
        msg = ResourceOwnership()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.resources = list(owners)
        msg.owners = [owners[r] for r in msg.resources]
        try:
            self.pub_owners.publish(msg)
        except Exception:  # noqa: B902 -- publisher gone at cleanup/shutdown
            pass

    def _publish_diagnostics(self) -> None:
        try:
            cycle = self.host.cycle(timeout=2.0)
            snapshot = cycle.statistics()
            owners = cycle.owners()
            safety = cycle.safety()
        except Exception as error:  # noqa: B902 -- the host gone: report, do not stop
            self.get_logger().warning(f'cycle statistics unavailable: {error}',
                                      throttle_duration_sec=10.0)
            return
        status = DiagnosticStatus(name=f'{self.get_namespace().strip("/")}: sync cycle',
                                  hardware_id='sweetie_motion')
        stats = snapshot.summary()
        scheduling = snapshot.scheduling
        if not stats.get('ticks'):
            status.level = DiagnosticStatus.WARN
            status.message = 'cycle not running'
        else:
            lost_now = stats['lost'] - self._last_lost
            self._last_lost = stats['lost']
            status.level = DiagnosticStatus.WARN if lost_now else DiagnosticStatus.OK
            status.message = (f'{stats["rate"]:.1f} Hz, compute p99 '
                              f'{stats["compute_p99"] * 1e3:.2f} ms, jitter p99 '
                              f'{stats["jitter_p99"] * 1e3:.2f} ms, lost {stats["lost"]}')
            values = {'period_s': self.process.period, **stats}
            status.values = [KeyValue(key=k, value=f'{v:.6g}') for k, v in values.items()]
            # when the cycle lost time since the last report (monotonic clock, to match with
            # other records): every late tick once, so that a listener can add them all up
            late = [tick for tick in snapshot.late_ticks if tick[0] > self._last_late]
            if late:
                self._last_late = late[-1][0]
            status.values.append(KeyValue(key='late_ticks', value=' '.join(
                f'{deadline:.6f}:{lateness:.6f}:{lost}' for deadline, lateness, lost in late)))
        status.values.append(KeyValue(key='scheduling', value=scheduling))
        status.values.append(KeyValue(key='isolated', value=str(self.host.isolated).lower()))
        status.values.append(KeyValue(key='owners', value=', '.join(
            f'{r}={o or "-"}' for r, o in owners.items())))
        array = DiagnosticArray(status=[status, self._safety_status(safety)])
        array.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(array)
