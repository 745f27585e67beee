"""
Every private rclpy API the package relies on, in one place (rclpy 7.1, ROS 2 Jazzy).

rclpy gives no public way to do what the motion process needs here (see
:mod:`sweetie_motion.nodes.executor` and :mod:`sweetie_motion.nodes.lifecycle`); these names
are what an rclpy upgrade may change, and ``test/ros/test_rclpy_private.py`` fails loudly,
naming the missing one, when it does.

- ``RCLError``, ``InvalidHandle``: the exceptions rclpy raises from its C extension (not
  exported by ``rclpy``'s public modules in Jazzy);
- ``MultiThreadedExecutor._executor`` (its thread pool), ``._futures`` (the tasks it submitted)
  and ``Executor._cb_iter`` (the generator of ready callbacks, reset after a wait set failed),
  and the ``_spin_once_impl`` it calls each round;
- ``LifecycleNode._service_change_state``: the change_state service, whose callback is wrapped
  so that an invalid transition is refused instead of ending the process;
- ``Node._parameters``: where a declared parameter's value lives. rclpy types a value by what
  it is, and an empty list is a byte array to it: a string-array parameter declared empty
  would stay *uninitialized*, and ``ros2 param get/dump`` get nothing for it. Its typed empty
  value is put there, and so is the new value of a read-only parameter the node derives.
- ``ActionClient._cancel_goal_async`` and ``._get_result_async``: the requests a goal handle
  sends, filed under a lock with their futures by :mod:`sweetie_motion.ros.action_client`
  (rclpy's own files them after sending: a quick response from another thread was lost);
  ``ActionClient._goal_sequence_number_to_goal_id``, ``._pending_goal_requests``,
  ``._goal_handles``, ``._action_type`` and ``ClientGoalHandle._status``: a goal whose
  response the server's RMW dropped is taken as accepted from the status topic there.
"""

from typing import Any, List

from rclpy._rclpy_pybind11 import InvalidHandle, RCLError

#: the rclpy version these names were checked against
CHECKED_RCLPY = '7.1'

#: (class path, attribute) of every private attribute used, for the upgrade test
PRIVATE_ATTRIBUTES = (
    ('rclpy.executors.MultiThreadedExecutor', '_executor'),
    ('rclpy.executors.MultiThreadedExecutor', '_futures'),
    ('rclpy.executors.MultiThreadedExecutor', '_spin_once_impl'),
    ('rclpy.executors.Executor', '_cb_iter'),
    ('rclpy.lifecycle.LifecycleNode', '_service_change_state'),
    ('rclpy.node.Node', '_parameters'),
    ('rclpy.action.ActionClient', '_cancel_goal_async'),
    ('rclpy.action.ActionClient', '_get_result_async'),
    ('rclpy.action.ActionClient', '_goal_sequence_number_to_goal_id'),
    ('rclpy.action.ActionClient', '_pending_goal_requests'),
    ('rclpy.action.ActionClient', '_goal_handles'),
    ('rclpy.action.ActionClient', '_action_type'),
    ('rclpy.action.client.ClientGoalHandle', '_status'),
)


def thread_pool(executor: Any) -> Any:
    """Return the thread pool (concurrent.futures) of a MultiThreadedExecutor."""
    return executor._executor


def submitted(executor: Any) -> List[Any]:
    """Return the list of futures a MultiThreadedExecutor keeps of the tasks it submitted."""
    return executor._futures


def forget_ready_callbacks(executor: Any) -> None:
    """Make the executor build its wait set anew on the next round."""
    executor._cb_iter = None


def change_state_service(node: Any) -> Any:
    """Return a LifecycleNode's change_state service (None if rclpy has none)."""
    return getattr(node, '_service_change_state', None)


def set_empty_array(node: Any, name: str, array_type: Any) -> None:
    """
    Give a declared, uninitialized array parameter its typed empty value.

    :param array_type: its rclpy ``Parameter.Type`` (STRING_ARRAY, DOUBLE_ARRAY, ...).
    """
    set_own_value(node, name, array_type, [])


def set_own_value(node: Any, name: str, parameter_type: Any, value: Any) -> None:
    """
    Change a declared parameter's value from inside the node, read-only ones included.

    rclpy refuses every change of a read-only parameter, its node's own too; a read-only
    parameter that reports what the node derived (a trajectory controller's ``joints``, from
    its ``controlled_chains`` at configure) is changed here, without a parameter event.

    :param parameter_type: its rclpy ``Parameter.Type``.
    """
    from rclpy.parameter import Parameter
    node._parameters[name] = Parameter(name, parameter_type, value)


__all__ = ['CHECKED_RCLPY', 'InvalidHandle', 'PRIVATE_ATTRIBUTES', 'RCLError',
           'change_state_service', 'forget_ready_callbacks', 'set_empty_array', 'set_own_value',
           'submitted', 'thread_pool']
