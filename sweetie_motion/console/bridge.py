"""
The console's adapter to the motion process: requests in, events out, over ROS.

:class:`ConsoleBridge` is given its rclpy node (the application creates, spins and destroys
it). Motions go through :class:`~sweetie_motion.ros.program_client.ArmClient` on that node (the
runner's backend of ``sweetie-motion program run``): program steps, Home, jogs (the
CartesianMotion action, a short move with ``start_from_current``) and the gripper. Those calls
block until the motion ends, so each job runs in a thread of its own (one at a time: the
presenter starts no job while one runs); the slider pose is streamed to ``joint_states_set``
(FollowJointState) from a timer of the node.

ROS callbacks and the worker never touch the presenter or a widget: they fill a pose buffer
and an event queue that :meth:`ConsoleBridge.poll` hands over in the GUI thread (the window's
QTimer). The links (joint_states, the trajectory controller, the Cartesian motion action,
FollowJointState, the gripper) are re-checked twice a second, so that everything works again
as soon as a restarted motion process is back; a job running when joint_states stop is given
up at once (:meth:`ConsoleBridge._abandon`).
"""

import threading
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from sweetie_motion.cartesian.runner import (chain_home, ProgramRunError, ProgramRunner,
                                             ProgramStopped)
from sweetie_motion.console.manual_moves import jog_target
from sweetie_motion.console.requests import (
    CommandGripper, FAILED, GripperState, JobFinished, JogTool, LineReached, MoveHome,
    PlanProgram, RunSteps, StepFinished, StepStarted, StopJob, STOPPED, StopStream, StreamDone,
    StreamJoints, SUCCEEDED,
)
from sweetie_motion.console.stream import JointStream
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.bridge_base import BridgeBase
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.model.robot_model import RobotModel

#: how often the slider stream is sent [s]
STREAM_PERIOD = 0.02


class ConsoleBridge(BridgeBase):
    """
    The console's ROS side.

    :param node: the console's rclpy node (spun by the caller in another thread).
    :param model: the configured robot model of the motion process.
    :param chain: the chain programs and jogs move.
    :param namespace: the motion process's robot namespace.
    :param cartesian: the Cartesian motion node's name; :param gripper: the gripper node's;
    :param controller: the trajectory controller's.
    :param timeout: how long to wait for the motion process to answer a request [s].
    :param planner: plans PlanProgram requests (an
        :class:`~sweetie_motion.console.planning.OfflinePlanner`); None: they are dropped.
    :param streams: a node spun in a thread of its own for ``joint_states`` and
        ``joint_states_ref`` (None: ``node``).
    """

    def __init__(self, node, model: RobotModel, chain: str, namespace: str,
                 cartesian: str = 'cartesian', gripper: str = 'gripper',
                 controller: str = 'joint_trajectory', timeout: float = 10.0,
                 planner: Any = None, streams: Any = None) -> None:
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from sweetie_motion.ros.program_client import ArmClient
        super().__init__()
        self.node = node
        self.model = model
        self.chain = chain
        self.planner = planner
        from sweetie_motion.ros.pendant import client_name, Pendant
        #: should the console die (kill -9, a crash), the motion process stops what it started
        self.pendant = Pendant(node, namespace, client_name('sweetie-motion console'))
        streams = node if streams is None else streams
        self.arm = ArmClient(namespace, model, chain, cartesian, gripper, streams, node=node,
                             timeout=timeout, controller=controller, pendant=self.pendant)
        self.ns = self.arm.ns
        self._JointState = JointState
        self.set_topic = f'{self.ns}/joint_states_set'
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._subscriptions = [
            streams.create_subscription(JointState, f'{self.ns}/joint_states',
                                        self._on_joint_states, 20),
            node.create_subscription(String, f'{self.ns}/{gripper}/state',
                                     lambda msg: self._put(GripperState(msg.data)),
                                     latched)]
        self._set_pub = node.create_publisher(JointState, self.set_topic, 10)
        # the slider stream: (id, joints, stream, time of its last step, arrival reported)
        self._stream: Optional[list] = None
        # the stream's timer runs only while a stream does: 50 wake-ups a second of the node's
        # executor otherwise, each a rebuild of its whole wait set
        self._stream_timer = node.create_timer(STREAM_PERIOD, self._send_stream)
        self._stream_timer.cancel()
        # jobs: the one running (id, its runner or None), those asked to stop, those given up
        self._active: Optional[Tuple[int, Optional[ProgramRunner]]] = None
        self._stop_requested: set = set()
        self._abandoned: set = set()
        self._threads: List[threading.Thread] = []

    def close(self) -> None:
        """Stop the job in progress and the worker (the node's owner destroys the node)."""
        self.node.destroy_timer(self._stream_timer)
        with self._lock:
            self._stream = None
            active = self._active
        if active is not None:
            self._stop(active[0])
        for thread in self._threads:
            thread.join(5.0)  # a job waiting on a motion process that died is left behind
        self.pendant.destroy()

    # --- incoming ------------------------------------------------------------------------------

    def _on_joint_states(self, msg) -> None:
        if len(msg.name) != len(msg.position):
            return
        with self._lock:
            self._store_pose(tuple(msg.name), tuple(msg.position), time.monotonic())

    def poll(self) -> List[object]:
        """Return the events since the last call: the newest pose, links, jobs, plans."""
        now = time.monotonic()
        events: List[object] = []
        pose, fresh = self._take_pose(now)
        if pose is not None:
            events.append(PoseReceived(*pose))
        self._refresh_links(now, fresh, events)
        if not fresh:
            self._abandon()
        self._drain(events)
        if self.planner is not None:
            events += self.planner.poll()
        return events

    def _check_links(self, fresh: bool) -> LinksChanged:
        # readiness of the very clients that move the arm
        ready = self.arm.readiness()
        return LinksChanged((
            ('joint_states', fresh),
            ('controller', fresh and ready['trajectory_controller']),
            ('cartesian', fresh and ready['cartesian_motion']),
            ('follow_joint_state', fresh and self.node.count_subscribers(self.set_topic) > 0),
            ('gripper', fresh and ready['gripper'])))

    # --- requests ------------------------------------------------------------------------------

    def submit(self, request: object) -> None:
        """Carry out a request of the presenter (called in the GUI thread)."""
        if isinstance(request, StreamJoints):
            self._set_stream(request)
        elif isinstance(request, StopStream):
            with self._lock:
                stream = self._stream
                if stream is not None and stream[0] == request.stream_id:
                    self._stream = None
                else:
                    stream = None
            if stream is not None:  # where it stopped, once more: FollowJointState holds it
                self._publish(stream[1], stream[2].position)
        elif isinstance(request, StopJob):
            self._stop(request.job_id)
        elif isinstance(request, PlanProgram):
            if self.planner is not None:
                self.planner.submit(request)
        elif isinstance(request, (RunSteps, MoveHome, JogTool, CommandGripper)):
            with self._lock:
                self._active = (request.job_id, None)
            thread = threading.Thread(target=self._work, args=(request,),
                                      name=f'console_job_{request.job_id}', daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()
        else:
            raise TypeError(f'the console bridge does not handle {type(request).__name__}')

    def _set_stream(self, request: StreamJoints) -> None:
        # should the console die while the sliders move the arm, FollowJointState holds
        self.pendant.follow([self.set_topic])
        with self._lock:
            stream = self._stream
            if stream is None or stream[0] != request.stream_id:
                stream = [request.stream_id, request.names,
                          JointStream(request.start, request.speeds, request.accelerations),
                          time.monotonic(), False]
                self._stream = stream
            else:
                stream[2].set_limits(request.speeds, request.accelerations)
                stream[4] = False
            stream[2].set_targets(request.targets)
            restart = self._stream_timer.is_canceled()
            if restart:
                self._stream_timer.reset()
        executor = self.node.executor
        if restart and executor is not None:
            executor.wake()     # its wait began without the timer: it is counted from now

    def _send_stream(self) -> None:
        """Advance the slider stream and send it (the node's timer, every STREAM_PERIOD)."""
        with self._lock:
            stream = self._stream
            if stream is None:
                self._stream_timer.cancel()  # under the lock: a new stream restarts it
                return
            now = time.monotonic()
            position = stream[2].advance(now - stream[3]).copy()
            stream[3] = now
            done = stream[2].arrived and not stream[4]
            stream[4] = stream[4] or done
        self._publish(stream[1], position)
        if done:
            self._put(StreamDone(stream[0]))

    def _publish(self, names, positions) -> None:
        msg = self._JointState(name=list(names), position=[float(p) for p in positions])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self._set_pub.publish(msg)

    def _stop(self, job_id: int) -> None:
        with self._lock:
            self._stop_requested.add(job_id)
            active = self._active
        if active is not None and active[0] == job_id:
            if active[1] is not None:
                active[1].stop()
            else:
                self.arm.stop()

    def _stopped(self, job_id: int) -> bool:
        with self._lock:
            return job_id in self._stop_requested

    # --- the jobs ------------------------------------------------------------------------------

    def _abandon(self) -> None:
        """
        Give the running job up: joint_states stopped (the motion process died).

        ArmClient notices a killed motion process only when DDS does (about 20 s later), or
        when a restarted one does not know the goal (within seconds): the job ends now, and
        whatever its thread says later is dropped.
        """
        with self._lock:
            active, self._active = self._active, None
            if active is not None:
                self._abandoned.add(active[0])
        if active is None:
            return
        runner = active[1]
        line = 0
        if runner is not None:
            runner.stop()
            line = runner.steps[runner.next].line if not runner.finished else 0
        else:
            self.arm.stop()
        self._put(JobFinished(
            active[0], FAILED, f'{f"line {line}: " if line else ""}the motion process stopped '
            'publishing joint_states (it died or was stopped): the motion is given up', line))

    def _put_job(self, event) -> None:
        """Queue a job's event, unless the job was given up (its end is said already)."""
        with self._lock:
            if event.job_id in self._abandoned:
                return
        self._put(event)

    def _work(self, request) -> None:
        """Run one job in its own thread (ArmClient's calls block until the motion ends)."""
        try:
            self._put_job(self._job(request))
        except Exception as error:  # noqa: B902 -- a job must end with a reason
            self._put_job(JobFinished(request.job_id, FAILED,
                                      f'{type(error).__name__}: {error}'))
        finally:
            with self._lock:
                if self._active is not None and self._active[0] == request.job_id:
                    self._active = None
                self._stop_requested.discard(request.job_id)

    def _job(self, request) -> JobFinished:
        job_id = request.job_id
        if isinstance(request, RunSteps):
            return self._run_steps(request)
        if self._stopped(job_id):
            return JobFinished(job_id, STOPPED, 'stopped before it started')
        arm = self.arm
        arm.resume()
        try:
            if isinstance(request, MoveHome):
                message = arm.move_joints(np.array(request.target), np.array(request.speed))
            elif isinstance(request, JogTool):
                start = arm.tool_pose()  # the reference: where start_from_current plans from
                target = jog_target(start, request.axis, request.amount, request.frame)
                message = arm.move_linear([start, target], [0.0, 0.0], [None, request.speed])
            else:
                message = arm.gripper(request.action)
        except SweetieMotionError as error:
            if self._stopped(job_id):
                return JobFinished(job_id, STOPPED, str(error))
            return JobFinished(job_id, FAILED, str(error))
        return JobFinished(job_id, SUCCEEDED, message)

    def _run_steps(self, request: RunSteps) -> JobFinished:
        job_id = request.job_id
        runner = ProgramRunner(request.steps, self.arm, self.model.list_joints(self.chain),
                               chain_home(self.model, self.chain))
        runner.next = request.first
        runner.next_move = request.first_move
        runner.override = request.override
        runner.on_line = lambda line: self._put_job(LineReached(job_id, line))
        with self._lock:
            if self._active is not None and self._active[0] == job_id:
                self._active = (job_id, runner)
        self.arm.resume()
        if self._stopped(job_id):
            return JobFinished(job_id, STOPPED, 'stopped before it started', runner.next_line,
                               runner.next, runner.override, runner.next_move)
        started = []

        def before(step) -> bool:
            if (request.single and started) or self._stopped(job_id):
                return False
            line = runner.next_line
            started.append((runner.next, line))
            self._put_job(StepStarted(job_id, runner.next, line,
                                      runner.describe_next(request.single)))
            return True

        def after(report) -> None:
            index, line = started[-1]
            self._put_job(StepFinished(job_id, index, line, report.message, report.seconds))
        try:
            runner.run(before, after, single_move=request.single)
        except ProgramStopped as error:
            return JobFinished(job_id, STOPPED, str(error), runner.next_line, runner.next,
                               runner.override, runner.next_move)
        except ProgramRunError as error:
            return JobFinished(job_id, FAILED, str(error), error.line, runner.next,
                               runner.override, runner.next_move)
        if self._stopped(job_id) and not runner.finished:
            return JobFinished(job_id, STOPPED, 'stopped between steps', runner.next_line,
                               runner.next, runner.override, runner.next_move)
        return JobFinished(job_id, SUCCEEDED, '', 0, runner.next, runner.override,
                           runner.next_move)
