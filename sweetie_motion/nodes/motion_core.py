"""
The motion core node: runs the sync cycle with the aggregator and publishes the process state.

Publishes ``joint_states`` (measured) and ``joint_states_ref`` (the aggregated reference), both
full poses in RobotModel order with current stamps; ``resource_owners`` (who drives what,
latched); and cycle statistics on ``/diagnostics``. Publishing runs in its own thread, woken by
the cycle, so that DDS never costs the cycle time.
"""

import threading
import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from sensor_msgs.msg import JointState
from sweetie_motion.conversions import fill_joint_state, joint_state
from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.ports import JointVector, LatestValue
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterSpec
from sweetie_motion_msgs.msg import ResourceOwnership

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


class _Snapshot:
    """Cycle stage 'observer': hands the tick's poses to the publisher thread."""

    name = 'state_snapshot'

    def __init__(self) -> None:
        self.poses: LatestValue = LatestValue()
        self.event = threading.Event()

    def update(self, tick: Tick) -> None:
        # no copies: a finished tick's poses are never written again (the cycle copies them
        # into the next tick)
        self.poses.write((tick.measured, tick.reference))
        self.event.set()


class MotionCoreNode(ManagedNode):
    """The node that owns the cycle's life: active = the cycle runs."""

    PARAMETERS = (
        ParameterSpec('period', 0.01, 'Sync cycle period [s] (set by the process config).',
                      read_only=True, low=0.0005, high=1.0),
        ParameterSpec('publish_rate', 100.0,
                      'Rate of joint_states and joint_states_ref [Hz]; at most the cycle rate.',
                      low=1.0, high=2000.0),
        ParameterSpec('diagnostics_period', 1.0, 'Period of the cycle diagnostics [s].',
                      low=0.05, high=60.0),
    )

    def __init__(self, process: MotionProcess, name: str = 'motion', **kwargs) -> None:
        self.process = process
        super().__init__(name, **kwargs)
        self._entities = []
        self._snapshot = _Snapshot()
        self._thread: Optional[threading.Thread] = None
        self._running = threading.Event()
        self._names = process.model.list_all_joints()
        self._last_lost = 0

    def configure_component(self) -> None:
        self.read_parameters()
        self.pub_state = self.make_publisher(JointState, 'joint_states', 10)
        self.pub_ref = self.make_publisher(JointState, 'joint_states_ref', 10)
        self.pub_owners = self.make_publisher(ResourceOwnership, 'resource_owners', LATCHED)
        self.pub_diag = self.make_publisher(DiagnosticArray, '/diagnostics', 10)
        self.diag_timer = self.create_timer(self.values['diagnostics_period'],
                                            self._publish_diagnostics)
        self._entities = [self.pub_state, self.pub_ref, self.pub_owners, self.pub_diag,
                          self.diag_timer]
        self.process.arbiter.add_listener(self._publish_owners)
        self._publish_owners(self.process.arbiter.owners())

    def activate_component(self) -> None:
        cycle = self.process.cycle
        bus = self.process.bus
        if bus is not None and not cycle.running:
            # start from where the robot is: no jump at the first tick
            measured = cycle.measured
            state = bus.receive(time.monotonic())
            indices = self.process.view.get_joint_indices(bus.joints)
            measured.position[indices] = state.position
            cycle.seed(measured, JointVector(measured.position.copy(),
                                             measured.velocity * 0.0, measured.effort.copy()))
        cycle.add_stage('aggregator', self.process.aggregator)
        cycle.add_stage('observer', self._snapshot)
        self._running.set()
        self._thread = threading.Thread(target=self._publish_loop, name='state_publisher',
                                        daemon=True)
        self._thread.start()
        cycle.start()

    def deactivate_component(self) -> None:
        self.process.cycle.stop()
        self.process.cycle.remove_stage(self.process.aggregator)
        self.process.cycle.remove_stage(self._snapshot)
        self._running.clear()
        self._snapshot.event.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None

    def cleanup_component(self) -> None:
        self.process.arbiter.remove_listener(self._publish_owners)
        self.destroy_entities(self._entities)

    # --- publishing ----------------------------------------------------------------------------

    def _publish_loop(self) -> None:
        rate = min(self.values['publish_rate'], 1.0 / self.process.period)
        interval = 1.0 / rate
        next_time = 0.0
        # the names are set once: assigning a list of strings costs a check per element
        state_msg = joint_state(self._names, np.zeros(0), np.zeros(0))
        ref_msg = joint_state(self._names, np.zeros(0), np.zeros(0))
        while self._running.is_set():
            if not self._snapshot.event.wait(0.5):
                continue
            self._snapshot.event.clear()
            now = time.monotonic()
            if now < next_time:
                continue
            next_time = max(next_time + interval, now - interval)
            poses = self._snapshot.poses.value
            if poses is None:
                continue
            measured, reference = poses
            if not self.context.ok():
                return
            # the stamp is the tick's time on the ROS clock, not the (later) publishing time
            now = self.get_clock().now()
            age = max(0.0, time.monotonic() - reference.stamp)
            stamp = Time(nanoseconds=now.nanoseconds - int(age * 1e9),
                         clock_type=now.clock_type).to_msg()
            state_msg.header.stamp = ref_msg.header.stamp = stamp
            fill_joint_state(state_msg, measured.position, measured.velocity, measured.effort)
            fill_joint_state(ref_msg, reference.position, reference.velocity)
            try:
                self.pub_state.publish(state_msg)
                self.pub_ref.publish(ref_msg)
            except Exception as error:  # noqa: B902 -- e.g. the context shutting down
                if self._running.is_set() and self.context.ok():
                    self.get_logger().warning(f'publishing joint states failed: {error}')

    def _publish_owners(self, owners) -> None:
        msg = ResourceOwnership()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.resources = list(owners)
        msg.owners = [owners[r] for r in msg.resources]
        try:
            self.pub_owners.publish(msg)
        except Exception:  # noqa: B902 -- publisher gone at cleanup/shutdown
            pass

    def _publish_diagnostics(self) -> None:
        stats = self.process.cycle.statistics.summary()
        status = DiagnosticStatus(name=f'{self.get_namespace().strip("/")}: sync cycle',
                                  hardware_id='sweetie_motion')
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
        owners = self.process.arbiter.owners()
        status.values.append(KeyValue(key='owners', value=', '.join(
            f'{r}={o or "-"}' for r, o in owners.items())))
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(array)
