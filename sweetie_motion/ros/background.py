"""
An rclpy node of its own, spun in a background thread: how clients and GUIs talk ROS.

The Python client, the servo command line, the editor and the console each own a context (so
that they do not depend on, or disturb, a global rclpy.init of the program using them), one
node and a thread spinning it; calls block on futures that this thread completes.
"""

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.ros.dds_profile import use_package_profile


def split_ros_args(argv: Sequence[str]) -> Tuple[List[str], List[str]]:
    """
    Split a command line into the program's own arguments and ``--ros-args ...``.

    :return: (own arguments, the ROS arguments from ``--ros-args`` on; empty if none).
    """
    argv = list(argv)
    if '--ros-args' not in argv:
        return argv, []
    split = argv.index('--ros-args')
    return argv[:split], argv[split:]


def lean_options() -> Dict[str, Any]:
    """Return rclpy.create_node's options for a node that only talks (no services, no rosout)."""
    from rclpy.parameter import Parameter
    return {'start_parameter_services': False, 'enable_rosout': False,
            'parameter_overrides': [Parameter('start_type_description_service', value=False)]}


class BackgroundNode:
    """
    A context, a node and the thread spinning it.

    :param name: the node's name.
    :param args: command line arguments for rclpy.init (``--ros-args ...`` remaps and
        parameters), None for none.
    :param domain_id: the ROS domain, None for ROS_DOMAIN_ID (or 0).
    :param lean: a node of a short-lived command: no parameter services, no type description
        service, no rosout (each is DDS endpoints the motion process must discover and match
        before it can answer this node; a command that asks and leaves needs none).
    """

    def __init__(self, name: str, args: Optional[List[str]] = None,
                 domain_id: Optional[int] = None, lean: bool = False) -> None:
        import rclpy
        from rclpy.context import Context
        self._rclpy = rclpy
        self.context = Context()
        extra = {} if domain_id is None else {'domain_id': domain_id}
        use_package_profile()
        rclpy.init(args=args, context=self.context, **extra)
        options = lean_options() if lean else {}
        self.node = rclpy.create_node(name, context=self.context, **options)
        self.executor, self._thread = self._spun(self.node, f'{name}_ros')
        self._streams: Optional[Tuple[Any, Any, threading.Thread]] = None

    def _spun(self, node: Any, thread_name: str) -> Tuple[Any, threading.Thread]:
        """Return an executor of ``node`` and the started thread that spins it."""
        from rclpy.executors import SingleThreadedExecutor
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(node)
        thread = threading.Thread(target=self._spin, args=(executor,), name=thread_name,
                                  daemon=True)
        thread.start()
        return executor, thread

    @staticmethod
    def _spin(executor) -> None:
        try:
            executor.spin()
        except Exception:  # noqa: B902 -- the context shuts down under the executor
            pass

    @property
    def streams(self) -> Any:
        """
        Return a lean node of this context, spun in a thread of its own: for 100 Hz topics.

        rclpy rebuilds its executor's wait set in Python at every wake-up, and Fast DDS's wait
        attaches to every entity in it: on a window's node (parameter services, the action
        client, service clients, their events) each ``joint_states`` message cost about a
        millisecond, a window's ROS thread 12-25 % of a core, holding the lock its GUI thread
        needs to take a click. On a node of its own with only the streams, a message wakes a
        wait set of a few entities. The node (``<name>_streams``, the main node's namespace)
        takes no command-line arguments: a ``__node`` remap would give it the main node's name.
        """
        if self._streams is None:
            name = f'{self.node.get_name()}_streams'
            node = self._rclpy.create_node(name, namespace=self.node.get_namespace(),
                                           context=self.context, use_global_arguments=False,
                                           **lean_options())
            self._streams = (node, *self._spun(node, name))
        return self._streams[0]

    def close(self, release: Optional[Callable[[], None]] = None) -> None:
        """
        Stop spinning; destroy the node and the context.

        :param release: called once nothing spins any more, before the node goes (entities
            the node does not destroy itself).
        """
        # bounded: a fresh-clone run saw `servo identify --abort` print its answer and then
        # hang here for 120 s (shutdown without a timeout waits for ever)
        streams, self._streams = self._streams, None
        if streams is not None:
            streams[1].shutdown(timeout_sec=5.0)
            streams[2].join(5.0)
        self.executor.shutdown(timeout_sec=5.0)
        # a spinning thread at interpreter exit aborts the process
        self._thread.join(5.0)
        if release is not None:
            release()
        if streams is not None:
            streams[0].destroy_node()
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)


def wait_future(future: Any, timeout: float, what: str,
                error: Type[SweetieMotionError] = SweetieMotionError,
                interrupt: Optional[threading.Event] = None) -> Any:
    """
    Wait for a future another thread's executor completes; return its result.

    :param interrupt: when set, the wait ends with ``error`` (a stop by the user).
    :raises error: no answer within ``timeout`` seconds (naming ``what``), or interrupted.
    """
    deadline = time.monotonic() + timeout
    while not future.done():
        if interrupt is not None and interrupt.is_set():
            raise error(f'stopped while waiting for {what}')
        if time.monotonic() > deadline:
            raise error(f'no answer within {timeout:g} s: {what}')
        time.sleep(0.01)
    return future.result()
