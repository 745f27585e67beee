"""Run the motion process in another process and talk to it over DDS, as a user would."""

import contextlib
import os
import re
import sys
import threading
from typing import Callable, Dict, Iterator, List, Optional

from lifecycle_msgs.srv import GetState
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_util import call_idempotent, HERE, Process, RosPeer, wait_for
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool
from sweetie_motion_msgs.msg import ResourceOwnership

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@contextlib.contextmanager
def motion_process(config: str, namespace: str, *extra: str,
                   check_exit: bool = True) -> Iterator[Process]:
    """
    Start `sweetie-motion bringup` with ``config``; stop it with SIGINT at the end.

    :param check_exit: assert that it exits with 0 and without a traceback (tests that kill
        processes on purpose check the exit themselves).
    """
    path = config if os.path.isabs(config) else os.path.join(HERE, 'config', config)
    if not os.path.exists(path):
        path = config  # a name in the package's config/
    process = Process([sys.executable, '-m', 'sweetie_motion.cli', 'bringup', '--config',
                       path, '--namespace', namespace, *extra], f'motion-{namespace}')
    try:
        yield process
    except BaseException:
        sys.stderr.write(f'\n----- output of the motion process -----\n{process.output()}\n')
        raise
    finally:
        # a deadline, not a measure: a loaded 2-core machine has taken over 10 s to stop one
        code = process.stop(timeout=30.0)
        output = process.output()
        os.unlink(process.log.name)
        if check_exit:
            assert code == 0, f'motion process exited with {code}:\n{output}'
            assert 'Traceback' not in without_rclpy_task_noise(output), output


#: rclpy's Future.__del__ on a Task whose attributes are gone at interpreter exit (seen once in
#: a bringup's last lines, after every test of its module had passed): rclpy's, not ours
_RCLPY_TASK_NOISE = re.compile(
    r'Exception ignored in: <function Future\.__del__ at 0x[0-9a-f]+>\n'
    r'Traceback \(most recent call last\):\n(?:  .*\n)+'
    r"AttributeError: 'Task' object has no attribute '_exception'\n?")


def without_rclpy_task_noise(output: str) -> str:
    """Return a process's output without rclpy's Future.__del__ noise at exit."""
    return _RCLPY_TASK_NOISE.sub('', output)


class MotionClient(RosPeer):
    """A peer that watches the motion process's topics and calls its services."""

    def __init__(self, namespace: str, domain_id: int) -> None:
        super().__init__(f'test_client_{namespace}', domain_id)
        self.ns = f'/{namespace}'
        self.lock = threading.Lock()
        self.joint_states: Optional[JointState] = None
        self.reference: Optional[JointState] = None
        self.owners: Dict[str, str] = {}
        self.history: List[JointState] = []
        node = self.node
        node.create_subscription(JointState, f'{self.ns}/joint_states', self._on_state, 50)
        node.create_subscription(JointState, f'{self.ns}/joint_states_ref', self._on_ref, 50)
        node.create_subscription(ResourceOwnership, f'{self.ns}/resource_owners',
                                 self._on_owners, LATCHED)
        self.publishers = {}

    def _on_state(self, msg):
        with self.lock:
            self.joint_states = msg

    def _on_ref(self, msg):
        with self.lock:
            self.reference = msg
            self.history.append(msg)

    def _on_owners(self, msg):
        with self.lock:
            self.owners = dict(zip(msg.resources, msg.owners))

    def wait_ready(self, nodes: List[str], timeout: float = 30.0,
                   state: str = 'active') -> None:
        """Wait until every node is in ``state`` (and, for 'active', joint states flow)."""
        for name in nodes:
            client = self.node.create_client(GetState, f'{self.ns}/{name}/get_state')
            assert client.wait_for_service(timeout_sec=timeout), f'{name} not discovered'
            wait_for(lambda: call_idempotent(client, GetState.Request(), timeout)
                     .current_state.label == state, timeout, period=0.2,
                     message=f'{name} {state}')
        if state == 'active':
            wait_for(lambda: self.joint_states is not None and self.reference is not None,
                     timeout, message='joint_states and joint_states_ref')

    def publish(self, topic: str, names: List[str], positions: List[float]) -> None:
        """Publish a JointState on ``topic`` (relative to the namespace)."""
        if topic not in self.publishers:
            self.publishers[topic] = self.node.create_publisher(JointState,
                                                                f'{self.ns}/{topic}', 10)
        self.publishers[topic].publish(JointState(name=names, position=positions))

    def stream(self, topic: str, names: List[str], positions: List[float],
               until: Callable[[], bool], message: str, timeout: float = 10.0,
               period: float = 0.05) -> None:
        """Publish the pose every ``period`` (as a GUI streams it) until ``until()`` holds."""
        def published_and_reached() -> bool:
            self.publish(topic, names, positions)
            return until()
        wait_for(published_and_reached, timeout, period, message=message)

    def call_bool(self, service: str, value: bool, timeout: float = 15.0):
        """Call a std_srvs/SetBool service; return the response."""
        client = self.node.create_client(SetBool, f'{self.ns}/{service}')
        assert client.wait_for_service(timeout_sec=timeout), f'{service} not available'
        return call_idempotent(client, SetBool.Request(data=value), timeout)

    def position(self, joint: str, which: str = 'measured') -> float:
        """Return the newest position of ``joint`` in joint_states or joint_states_ref."""
        with self.lock:
            msg = self.joint_states if which == 'measured' else self.reference
        return msg.position[list(msg.name).index(joint)]


def unreadable_parameters(peer: RosPeer, namespace: str, nodes: List[str]) -> List[str]:
    """
    Dump every parameter of ``nodes`` as `ros2 param dump` does; return what did not read.

    Through each node's list_parameters and get_parameters services, from this process: a
    parameter whose value comes back unset (or not at all) is returned as 'node: name'.
    """
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import GetParameters, ListParameters
    problems = []
    for name in nodes:
        prefix = f'/{namespace}/{name}'
        lister = peer.node.create_client(ListParameters, f'{prefix}/list_parameters')
        getter = peer.node.create_client(GetParameters, f'{prefix}/get_parameters')
        assert lister.wait_for_service(timeout_sec=15) and getter.wait_for_service(timeout_sec=15)
        names = list(call_idempotent(lister, ListParameters.Request(), 15).result.names)
        assert names, f'{name} lists no parameter'
        values = call_idempotent(getter, GetParameters.Request(names=names), 15).values
        if len(values) != len(names):
            problems.append(f'{name}: {len(values)} values for {len(names)} parameters')
            continue
        problems += [f'{name}: {p}' for p, v in zip(names, values)
                     if v.type == ParameterType.PARAMETER_NOT_SET]
    return problems
