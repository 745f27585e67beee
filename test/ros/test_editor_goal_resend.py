"""
The editor's goal request without an answer is sent once more, and is reported once.

A trajectory controller that does not answer in time (here: one whose executor is busy for
longer than the editor's ``call_timeout`` with the first request, as a restarted motion process
is until it has matched the editor) gets the goal a second time; the second takes over at the
controller, and the editor reports one acceptance and one result: succeeded.
"""

import threading
import time

import pytest
from ros_util import RosPeer, wait_for

pytestmark = [pytest.mark.ros]

NS = 'resend'


def bridge_node(timeout: float):
    from sweetie_motion.ros.background import BackgroundNode
    return BackgroundNode('editor_resend', ['editor_resend', '--ros-args', '-p',
                                            f'namespace:={NS}', '-p', f'call_timeout:={timeout}'])


class Controller:
    """A FollowJointTrajectory server that holds the first request ``hold`` seconds."""

    def __init__(self, peer: RosPeer, hold: float) -> None:
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer, GoalResponse
        from sensor_msgs.msg import JointState
        self.requests = 0
        self.executed = 0

        def on_goal(_request):
            self.requests += 1
            if self.requests == 1:
                time.sleep(hold)
            return GoalResponse.ACCEPT

        def execute(handle):
            self.executed += 1
            handle.succeed()
            return FollowJointTrajectory.Result(error_string='done')
        self.server = ActionServer(peer.node, FollowJointTrajectory,
                                   f'/{NS}/joint_trajectory/follow_joint_trajectory',
                                   execute_callback=execute, goal_callback=on_goal)
        self.publisher = peer.node.create_publisher(JointState, f'/{NS}/joint_states', 10)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._publish, args=(JointState,), daemon=True)
        self.thread.start()

    def _publish(self, kind) -> None:
        # the editor gives a goal up when joint_states stop: they go on here
        while not self.stop.wait(0.05):
            self.publisher.publish(kind(name=['joint51'], position=[0.0]))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.server.destroy()


def execute(bridge, goal_id: int):
    from sweetie_motion.editor.requests import ExecuteGoal, GoalAccepted, GoalFinished
    from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
    goal = TrajectoryGoal(['joint51'], [TrajectoryPoint(0.0, [0.0]), TrajectoryPoint(0.5, [0.1])])
    from sweetie_motion.gui.events import LinksChanged
    seen = []
    wait_for(lambda: seen.extend(bridge.poll()) or any(
        isinstance(e, LinksChanged) and dict(e.links)['controller'] for e in seen), 20,
        period=0.1, message='the controller shown connected')
    bridge.submit(ExecuteGoal(goal_id, goal, 10.0))
    events = []
    wait_for(lambda: events.extend(bridge.poll()) or
             any(isinstance(e, GoalFinished) for e in events), 30, period=0.05,
             message='the goal finished')
    accepted = [e for e in events if isinstance(e, GoalAccepted)]
    finished = [e for e in events if isinstance(e, GoalFinished)]
    return accepted, finished


def test_an_unanswered_goal_is_sent_again_and_reported_once(domain_id):
    from sweetie_motion.editor.bridge import EditorBridge
    from sweetie_motion.editor.requests import SUCCEEDED
    with RosPeer('controller') as peer:
        controller = Controller(peer, hold=3.0)
        background = bridge_node(2.0)
        bridge = EditorBridge(background.node)
        try:
            wait_for(lambda: bridge.latest_pose() is not None, 20, message='joint_states')
            accepted, finished = execute(bridge, 1)
        finally:
            bridge.close()
            background.close()
            controller.close()
    assert controller.requests == 2, 'the goal was not asked again'
    assert len(accepted) == 1 and len(finished) == 1, (accepted, finished)
    assert finished[0].outcome == SUCCEEDED, finished[0]
