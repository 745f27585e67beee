"""
The motion process: every component as a lifecycle node in one multi-threaded executor.

`sweetie-motion bringup [--config FILE]` (and launch/sweetie_motion.launch.py) run
:func:`main`: read the process config, configure the RobotModel, start the cycle side (by
default a child process of its own, see :mod:`sweetie_motion.host.client`), create each
component's node, bring them to active (unless ``autostart`` is off), spin, and on
SIGINT/SIGTERM stop the cycle and release everything. Users see one command, one launch file
and the same lifecycle nodes either way.
"""

import contextlib
import os
import sys
import tempfile
import threading
import time
from typing import Iterator, List, Optional, Sequence

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException
from sweetie_motion.command_line import CommandParser, positive_count, positive_seconds
from sweetie_motion.controllers.catalog import component_type, node_classes
from sweetie_motion.core.events import CycleEvent, HostExited
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.host.client import HostClient, HostSettings, LocalHost, RemoteHost
from sweetie_motion.model.description import load_robot_description
from sweetie_motion.nodes.controller_manager import ControllerManagerNode
from sweetie_motion.nodes.executor import MotionExecutor
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.nodes.motion_core import MotionCoreNode
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.process_config import (
    apply_parameter_rules, BUS_CHOICES, BUS_TYPES, check_namespace, check_period,
    DESCRIPTION_SOURCES, load_process_config, ProcessConfig,
)
from sweetie_motion.process_lock import NamespaceLock
from sweetie_motion.ros.background import split_ros_args
from sweetie_motion.ros.dds_profile import discovery_reaches_other_machines
from sweetie_motion.ros_arguments import parse_ros_arguments

#: Python threads switch every 5 ms by default; the cycle thread (when it runs in this
#: process) must not wait that long for the GIL behind a busy callback [s]
SWITCH_INTERVAL = 0.0005

#: components whose type installs the servo bus (process_config.BUS_TYPES) are configured and
#: activated first
#: how long a bringup whose cycle process ended goes on answering the goals it ran [s]
ANSWER_TIMEOUT = 3.0
#: spinning after the last goal's result: the result replies leave the process [s]
RESULT_FLUSH = 0.3
#: --stop-with-parent: the longest wait for the robot to come to rest after the parent died [s]
REST_TIMEOUT = 5.0
#: a reference whose joints are all slower than this is at rest [rad/s]
AT_REST = 1e-3
#: how long the reference must stay at rest before a --stop-with-parent bringup ends [s]
REST_CONFIRMED = 0.5


class MotionBringup:
    """
    Builds and runs the motion process of one configuration.

    :param config: the validated process configuration.
    :param context: rclpy context (default: the global one).
    :param ros_args: the process's ROS arguments, passed on to the cycle process.
    :param urdf_xml: the URDF to use instead of the robot description's file ('' : the file).
    """

    def __init__(self, config: ProcessConfig, context=None,
                 ros_args: Sequence[str] = (), urdf_xml: str = '') -> None:
        self.config = config
        self.context = context
        model = load_robot_description(config.robot, urdf_xml)
        model.configure()
        if config.isolated_cycle:
            priority = int(config.motion.get('cycle_priority', MotionCoreNode.CYCLE_PRIORITY))
            host = RemoteHost(HostSettings(str(config.robot), config.period, config.namespace,
                                           list(ros_args), priority=priority,
                                           urdf_xml=urdf_xml))
        else:
            host = LocalHost(model, config.period)
        #: set when the cycle process ended by itself (the bringup then stops)
        self.host_exited = threading.Event()
        host.add_listener(self._on_host_event)
        self.process = MotionProcess(model, host, (str(config.robot), urdf_xml))
        namespace = config.namespace
        kwargs = {'namespace': namespace, 'context': context}
        try:
            self.motion = MotionCoreNode(self.process, parameters={
                'period': config.period, **config.motion}, **kwargs)
            # one registry resolves each type, built-in or module:Class: the nodes are made
            # from it and the controller manager reads which of them are controllers
            types = [component_type(c.type_name) for c in config.components]
            self.components: List[ManagedNode] = []
            for order, (component, kind) in enumerate(zip(config.components, types)):
                node = kind.node_class()(self.process, component.name,
                                         parameters=component.parameters, **kwargs)
                node.order = order
                self.components.append(node)
            #: ros2_control's controller manager services over these nodes
            self.manager = ControllerManagerNode(
                self.motion, list(zip(self.components, types)), **kwargs)
        except BaseException:
            host.close()
            raise

    @property
    def host(self) -> HostClient:
        """Return the client of the cycle host."""
        return self.process.host

    @property
    def nodes(self) -> List[ManagedNode]:
        """Return every node of the process, the motion core first."""
        return [self.motion] + self.components

    def _start_order(self) -> List[ManagedNode]:
        buses = [n for n, c in zip(self.components, self.config.components)
                 if c.type_name in BUS_TYPES]
        others = [n for n in self.components if n not in buses]
        return buses + [self.motion] + others

    def start(self) -> List[str]:
        """
        Configure, then activate every node; stop at the first that fails.

        :return: one line per node that failed, with why ('' : none failed).
        """
        for step in ('configure', 'activate'):
            for node in self._start_order():
                if step == 'configure':
                    node.trigger_configure()
                else:
                    node.trigger_activate()
                wanted = 'inactive' if step == 'configure' else 'active'
                if node.lifecycle_state != wanted:
                    reason = node.failure or f'{step} failed (state {node.lifecycle_state})'
                    return [f'{node.get_name()}: {reason}']
        return []

    def stop(self) -> None:
        """Stop the cycle and release every component (reverse start order), then the host."""
        try:
            self.host.cycle(timeout=3.0).stop_cycle()
        except SweetieMotionError:
            pass  # the cycle process is gone already
        for node in reversed(self._start_order()):
            try:
                state = node.lifecycle_state
                if state == 'active':
                    node.deactivate_component()
                if state in ('active', 'inactive'):
                    node.cleanup_component()
            except Exception as error:  # noqa: B902 -- shutting down: report, go on
                print(f'sweetie_motion: stopping {node.get_name()}: {error}', file=sys.stderr)
        self.process.close()
        self.host.close()

    def _on_host_event(self, event: CycleEvent) -> None:
        if isinstance(event, HostExited):
            self.host_exited.set()


def build_parser() -> CommandParser:
    """Return the argument parser of the bringup."""
    parser = CommandParser(
        prog='sweetie-motion bringup',
        description='Run the motion process until Ctrl+C. It is three processes: the ROS side '
                    '(every component of the config as a lifecycle node), the cycle process '
                    '(the sync cycle: servos in, controllers, aggregator, safety stage, servos '
                    'out; real-time priority where allowed) and the state publisher. ROS '
                    'arguments go after --ros-args.')
    parser.add_argument('--config', default='sweetie_bot_motion.yaml',
                        help='process config YAML (a name in config/ or a path)')
    parser.add_argument('--namespace', help="robot namespace (default: the config's)")
    parser.add_argument('--period', help="cycle period [s] (default: the config's; 0.01 is "
                        '100 Hz)')
    parser.add_argument('--no-autostart', action='store_true',
                        help='leave every node unconfigured (drive them with lifecycle '
                             'services)')
    parser.add_argument('--storage-dir',
                        help='override storage_dir of the trajectory_storage component')
    parser.add_argument('--threads', type=positive_count, default=4,
                        help='threads of the MultiThreadedExecutor')
    parser.add_argument('--bus', choices=BUS_CHOICES,
                        help='the servos: virtual (the kinematic virtual robot), physics (the '
                        'robot on a floor in a physics engine: it can tip, slip and strain), '
                        'sim-serial (HerkuleX bus simulators on pseudo-terminals, through the '
                        'real driver) or serial (the ports of --servos); default: the config')
    parser.add_argument('--servos', help='servo config of sim-serial and serial (default '
                        'sweetie_bot_servos.yaml: ports, baud rates, IDs, joints)')
    parser.add_argument('--robot-description', choices=DESCRIPTION_SOURCES,
                        help="where the URDF comes from: file (the robot description's, the "
                        'default), parameter (--ros-args -p robot_description:=...) or topic '
                        '(the latched robot_description topic of robot_state_publisher)')
    parser.add_argument('--description-timeout', type=positive_seconds, default=30.0,
                        help='seconds to wait for the robot_description topic')
    parser.add_argument('--in-process', action='store_true',
                        help='run the sync cycle in this process instead of a child process of '
                             'its own (isolated_cycle: false; for debugging and profiling)')
    parser.add_argument('--stop-with-parent', action='store_true',
                        help='end when the process that started this one ends, once the robot '
                             'is at rest (what --with-robot of the editor and the console and '
                             'the demo use: a killed window leaves no motion process behind)')
    return parser


def robot_description(config: ProcessConfig, timeout: float, context=None) -> str:
    """
    Return the URDF from where the config says: '' for the file, else the ROS parameter or topic.

    ``parameter``: the ``robot_description`` parameter (``--ros-args --params-file FILE`` or a
    launch file's parameters). ``topic``: the latched
    ``robot_description`` topic of the robot namespace (std_msgs/String), as
    robot_state_publisher publishes it; waits ``timeout`` seconds at most.

    :raises SweetieMotionError: the parameter is not set, or nothing came on the topic.
    """
    if config.robot_description == 'file':
        return ''
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    node = rclpy.create_node('sweetie_motion_description', namespace=config.namespace or None,
                             context=context,
                             automatically_declare_parameters_from_overrides=True)
    try:
        if config.robot_description == 'parameter':
            value = node.get_parameter_or('robot_description', None)
            xml = value.value if value is not None else None
            if not isinstance(xml, str) or not xml.strip():
                raise SweetieMotionError(
                    'robot_description: parameter: no robot_description parameter; pass the '
                    'URDF in a parameters file (--ros-args --params-file FILE with '
                    '/**: {ros__parameters: {robot_description: "<robot ...>"}}), as a launch '
                    'file does')
            return xml
        box: List[str] = []
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(String, 'robot_description', lambda m: box.append(m.data),
                                 latched)
        topic = node.resolve_topic_name('robot_description')
        print(f'sweetie-motion bringup: waiting for the URDF on {topic} (up to {timeout:g} s)',
              file=sys.stderr, flush=True)
        from rclpy.executors import SingleThreadedExecutor
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + timeout
        while not box and time.monotonic() < deadline and executor.context.ok():
            executor.spin_once(timeout_sec=0.1)
        executor.remove_node(node)
        if not box or not box[-1].strip():
            raise SweetieMotionError(f'robot_description: topic: no URDF on {topic} within '
                                     f'{timeout:g} s (is robot_state_publisher running?)')
        return box[-1]
    finally:
        node.destroy_node()


class RunningCheck(threading.Thread):
    """
    Look for a motion process already running in ``namespace`` (its ``motion`` node).

    Runs beside the start-up, only when discovery reaches other machines (on this one the
    namespace's lock answers at once and for certain): discovery takes a second or so, several
    on a busy machine; it is given 3 s, which a start with nobody there waits. :attr:`found`
    says who runs it ('' : nobody), from its motion node's ``process`` parameter. A motion
    node that does not answer is a process that ended (discovery keeps it for a while): it
    does not count.

    :param namespace: the robot namespace (without slashes).
    :param wait: how long discovery is given [s].
    """

    def __init__(self, namespace: str, wait: float = 3.0) -> None:
        super().__init__(name='namespace_check', daemon=True)
        self.namespace = namespace
        self.wait = wait
        self.found = ''

    def run(self) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rcl_interfaces.srv import GetParameters
        node = rclpy.create_node('sweetie_motion_start_check')
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        space = '/' + self.namespace if self.namespace else '/'
        try:
            deadline = time.monotonic() + self.wait
            while time.monotonic() < deadline:
                if ('motion', space) in node.get_node_names_and_namespaces():
                    break
                executor.spin_once(timeout_sec=0.05)
            else:
                return
            # a process killed a moment ago stays in discovery for a while: only one that
            # answers runs
            client = node.create_client(GetParameters,
                                        f'{space.rstrip("/")}/motion/get_parameters')
            if client.wait_for_service(timeout_sec=2.0):
                future = client.call_async(GetParameters.Request(names=['process']))
                executor.spin_until_future_complete(future, timeout_sec=2.0)
                values = future.result().values if future.done() and future.result() else []
                if values:
                    who = f' ({values[0].string_value})' if values[0].string_value else ''
                    self.found = f'node {space.rstrip("/")}/motion{who}'
        finally:
            executor.shutdown(timeout_sec=1.0)
            node.destroy_node()


def spin_until(executor: MotionExecutor, stop: threading.Event,
               parent: Optional[int] = None) -> None:
    """
    Spin ``executor`` until the context shuts down or ``stop`` is set.

    :param parent: also until this process (the one that started this one) has ended.
    """
    while not stop.is_set() and executor.context.ok():
        executor.spin_once(timeout_sec=0.5)
        if parent is not None and os.getppid() != parent:
            return


def wait_at_rest(executor: MotionExecutor, bringup: 'MotionBringup',
                 timeout: float = REST_TIMEOUT) -> bool:
    """
    Spin ``executor`` until the reference rests for a while (a dead client's pendant stops it).

    Rest alone is not enough: a motion that paused would end the wait while its client's goals
    still run. Every pendant watch of the bringup's nodes must also have looked at its clients
    after this wait began (the parent's end is then seen, its motions stopped), or be idle
    (no client holds anything of its node).

    :return: whether it came to rest within ``timeout`` [s].
    """
    began = time.monotonic()
    deadline = began + timeout
    watches = [watch for node in bringup.nodes for watch in node.pendant_watches()]
    resting_since = None
    while executor.context.ok() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
        try:
            velocity = bringup.host.cycle(timeout=1.0).poses().reference.velocity
        except SweetieMotionError:
            return False
        now = time.monotonic()
        if float(np.max(np.abs(velocity), initial=0.0)) >= AT_REST:
            resting_since = None
        elif resting_since is None:
            resting_since = now
        elif now - resting_since >= REST_CONFIRMED and all(
                watch.idle or (watch.looked is not None and watch.looked > began)
                for watch in watches):
            return True
    return False


def answer_goals(executor: MotionExecutor, nodes: Sequence[ManagedNode],
                 timeout: float = ANSWER_TIMEOUT) -> None:
    """
    Spin ``executor`` until every running action goal of ``nodes`` has its result.

    When the cycle process ends, the trajectory controllers abort their goals (from the
    executor); the clients waiting for a result (MoveIt, `play`) are told so before this
    process leaves, instead of finding the action server gone.
    """
    deadline = time.monotonic() + timeout
    if not any(node.goals_running() for node in nodes):
        return
    while executor.context.ok() and time.monotonic() < deadline and \
            any(node.goals_running() for node in nodes):
        executor.spin_once(timeout_sec=0.05)
    flushed = time.monotonic() + RESULT_FLUSH
    while executor.context.ok() and time.monotonic() < flushed:
        executor.spin_once(timeout_sec=0.05)


def init_ros(ros_args: Sequence[str]) -> None:
    """
    Initialize rclpy with the process's ROS arguments.

    rcl refuses what it cannot parse with an error logged on standard error and an exception
    of many lines; here it is one line.

    :raises SweetieMotionError: rcl refused the arguments.
    """
    from sweetie_motion.nodes.rclpy_private import RCLError
    from sweetie_motion.ros.dds_profile import use_motion_profile
    use_motion_profile()   # not a client's (the module says why); its children inherit it
    captured: List[str] = []
    try:
        with captured_stderr(captured):
            rclpy.init(args=['sweetie_motion', *ros_args])
    except RCLError as error:
        reason = str(error).replace('failed to initialize rcl: ', '').split(', at /')[0]
        raise SweetieMotionError(f'--ros-args: {reason}') from None
    sys.stderr.write(''.join(captured))


@contextlib.contextmanager
def captured_stderr(into: List[str]) -> Iterator[None]:
    """Append to ``into`` what is written on file descriptor 2 (C libraries too) in the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile('w+') as stream:
        os.dup2(stream.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            stream.seek(0)
            into.append(stream.read())


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the motion process until SIGINT/SIGTERM."""
    argv, ros_args = split_ros_args(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    try:
        known_types = node_classes()
        config = load_process_config(args.config, known_types=known_types,
                                     motion_type=MotionCoreNode)
        if args.namespace is not None:
            config.namespace = check_namespace(args.namespace, '--namespace')
        if args.period is not None:
            config.period = check_period(args.period, '--period')
        if args.no_autostart:
            config.autostart = False
        if args.in_process:
            config.isolated_cycle = False
        if args.robot_description:
            config.robot_description = args.robot_description
        if args.bus or args.servos:
            config.select_bus(args.bus or config.bus or 'serial', args.servos)
        if args.storage_dir:
            for component in config.components:
                if component.type_name == 'trajectory_storage':
                    component.parameters['storage_dir'] = args.storage_dir
        # --ros-args -p / --params-file: checked and applied before anything starts
        apply_parameter_rules(config, parse_ros_arguments(ros_args), known_types,
                              MotionCoreNode, other_nodes=['controller_manager'])
    except SweetieMotionError as error:
        print(f'sweetie-motion bringup: {error}', file=sys.stderr)
        return 2
    # one motion process per namespace: the second would take the first's topics, actions and
    # goals. On this machine the lock decides at once and for certain; the graph check below
    # finds one on another machine (once discovery found it)
    lock = NamespaceLock(config.namespace)
    try:
        holder = lock.acquire()
    except OSError as error:
        print(f'sweetie-motion bringup: {error}', file=sys.stderr)
        return 2
    if holder:
        refuse_second(config.namespace, f'node {motion_node(config.namespace)} ({holder})')
        return 1
    try:
        init_ros(ros_args)
    except SweetieMotionError as error:
        lock.release()
        print(f'sweetie-motion bringup: {error}', file=sys.stderr)
        return 2
    try:
        return run_locked(config, args, ros_args)
    finally:
        lock.release()


def motion_node(namespace: str) -> str:
    """Return the full name of the motion node of a namespace."""
    return f'/{namespace}/motion' if namespace else '/motion'


def refuse_second(namespace: str, found: str) -> None:
    """Say that a motion process runs in ``namespace`` already (``found``: which)."""
    print(f'sweetie-motion bringup: a motion process already runs in /{namespace}: {found}; '
          'stop it first, or give this one another --namespace (or ROS_DOMAIN_ID)',
          file=sys.stderr)


def run_locked(config: ProcessConfig, args, ros_args: Sequence[str]) -> int:
    """Run the motion process of ``config`` (rclpy initialized, the namespace's lock held)."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    bringup = executor = None
    # on this machine the namespace's lock answers for certain: the graph check, which waits
    # for discovery (3 s when nobody is there), looks only where the lock cannot
    running = RunningCheck(config.namespace) if discovery_reaches_other_machines() else None
    if running is not None:
        running.start()
    try:
        urdf_xml = robot_description(config, args.description_timeout)
        if running is not None:
            running.join()
            if running.found:
                refuse_second(config.namespace, running.found)
                return 1
        bringup = MotionBringup(config, ros_args=ros_args, urdf_xml=urdf_xml)
        executor = MotionExecutor(num_threads=max(2, args.threads))
        for node in bringup.nodes:
            executor.add_node(node)
        executor.add_node(bringup.manager)
        if not start_nodes(bringup):
            return 1
        return serve(executor, bringup, args.stop_with_parent)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except SweetieMotionError as error:
        print(f'sweetie-motion bringup: {error}', file=sys.stderr)
        return 2
    finally:
        release(bringup, executor)
        # the check's node must be gone before the context: a thread still spinning at exit
        # aborts the process (std::terminate) instead of returning the exit code
        if running is not None:
            running.join(10.0)
        rclpy.try_shutdown()
    return 0


def start_nodes(bringup: MotionBringup) -> bool:
    """
    Bring every node to active if the config says so (autostart); say the process is ready.

    :return: False if a node failed (said on stderr): the process does not run without it.
    """
    config = bringup.config
    log = bringup.motion.get_logger()
    if config.autostart:
        failed = bringup.start()
        if failed:
            # a process that cannot give what its config promises does not run without it
            for line in failed:
                print(f'sweetie-motion bringup: {line}', file=sys.stderr)
            print('sweetie-motion bringup: not started (fix the above, or leave the '
                  'component out of the process config)', file=sys.stderr)
            return False
        log.info(f'active: {", ".join(n.get_name() for n in bringup.nodes)}')
    else:
        log.info('autostart off: every node is unconfigured')
    log.info(f'motion process ready: namespace /{config.namespace}, '
             f'{1.0 / config.period:.0f} Hz, robot {config.robot.name}')
    return True


def serve(executor: MotionExecutor, bringup: MotionBringup, stop_with_parent: bool) -> int:
    """
    Spin until SIGINT/SIGTERM, the cycle process's end or (``stop_with_parent``) the parent's.

    :return: the exit code: 1 when the cycle process ended, else 0.
    """
    log = bringup.motion.get_logger()
    parent = os.getppid() if stop_with_parent else None
    spin_until(executor, bringup.host_exited, parent)
    if parent is not None and os.getppid() != parent:
        log.warning('the process that started this bringup ended: stopping once the '
                    'robot is at rest')
        if not wait_at_rest(executor, bringup):
            log.warning(f'the robot was not at rest within {REST_TIMEOUT:g} s: stopping '
                        'anyway')
        return 0
    if bringup.host_exited.is_set():
        print('sweetie-motion bringup: the cycle process ended: the robot is not driven '
              'any more; stopping', file=sys.stderr)
        answer_goals(executor, bringup.nodes)
        return 1
    return 0


def release(bringup: Optional[MotionBringup], executor: Optional[MotionExecutor]) -> None:
    """Stop the cycle and every node, the executor, then destroy the nodes (what exists)."""
    if bringup is not None:
        bringup.stop()
    if executor is not None:
        executor.shutdown(timeout_sec=2.0)
    if bringup is not None:
        for node in bringup.nodes:
            node.destroy_node()
        bringup.manager.destroy_node()
