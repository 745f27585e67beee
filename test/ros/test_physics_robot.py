"""
The physics robot: `bringup --bus physics` on the real engine, observed over DDS (#34 item 3).

One motion process for the whole module (the pony on the floor in MuJoCo); each test leaves it
standing in the zero pose, torque on. Every wait has a deadline; nothing sleeps a fixed time.
"""

import math
import subprocess
import sys
import threading

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import PoseStamped
from motion_process import motion_process, MotionClient
import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from ros_util import call_idempotent, ROOT, wait_for, wait_future
from sweetie_motion.nodes.physics_robot import PhysicsRobotNode
from sweetie_motion.parameters import ParameterError
from sweetie_motion.ros.action_client import ActionClient
from sweetie_motion_msgs.msg import FootContacts
from sweetie_motion_msgs.srv import SetChainsTorque
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_physics'
NODES = ['motion', 'physics_robot', 'torque_main_switch', 'follow_joint_state',
         'joint_trajectory']
#: the pony's base stands this high on the floor, servos holding the zero pose [m]
STANDING = 0.236
#: the pony's weight [N] (2.707 kg)
WEIGHT = 2.707 * 9.81
LIFTED = {'joint12': -0.8, 'joint13': 1.5}


class PhysicsClient(MotionClient):
    """The motion process's client, also watching the physics robot's topics."""

    def __init__(self, namespace: str, domain_id: int) -> None:
        super().__init__(namespace, domain_id)
        self.pose = self.contacts = self.tf = None
        self.poses = []
        self.recording = threading.Event()
        prefix = f'{self.ns}/physics_robot'
        self.node.create_subscription(PoseStamped, f'{prefix}/base_pose', self._on_pose, 10)
        self.node.create_subscription(FootContacts, f'{prefix}/contacts', self._on_contacts, 10)
        self.node.create_subscription(TFMessage, '/tf', self._on_tf,
                                      QoSProfile(depth=100,
                                                 reliability=ReliabilityPolicy.RELIABLE))

    def _on_pose(self, msg):
        with self.lock:
            self.pose = msg
            if self.recording.is_set():
                self.poses.append(msg)

    def _on_contacts(self, msg):
        with self.lock:
            self.contacts = msg

    def _on_tf(self, msg):
        with self.lock:
            self.tf = msg

    def height(self) -> float:
        """Return the base's height above the floor [m]."""
        return self.pose.pose.position.z

    def tilt(self) -> float:
        """Return the base's tilt from the vertical [rad]."""
        return tilt_of(self.pose)

    def foot(self, leg: str):
        """Return (in contact, contact point z [m], vertical force [N]) of a leg."""
        msg = self.contacts
        k = list(msg.name).index(leg)
        return msg.in_contact[k], msg.position[k].z, msg.force[k].z

    def standing(self) -> bool:
        """Return whether the pony stands upright at its height on all four hooves."""
        return (abs(self.height() - STANDING) < 0.01 and self.tilt() < math.radians(3) and
                all(self.contacts.in_contact))


def tilt_of(pose: PoseStamped) -> float:
    """Return the angle between a pose's z axis and the vertical [rad]."""
    q = pose.pose.orientation
    z_of_z = 1.0 - 2.0 * (q.x * q.x + q.y * q.y)
    return math.acos(max(-1.0, min(1.0, z_of_z)))


@pytest.fixture(scope='module')
def pony(tmp_path_factory):
    from domains import own_domain
    storage = tmp_path_factory.mktemp('physics_store')
    with own_domain() as domain:
        with motion_process('sweetie_bot_motion.yaml', NS, '--bus', 'physics',
                            '--storage-dir', str(storage)) as process:
            with PhysicsClient(NS, domain) as client:
                client.wait_ready(NODES)
                client.process = process
                client.fjt = ActionClient(client.node, FollowJointTrajectory,
                                          f'/{NS}/joint_trajectory/follow_joint_trajectory')
                assert client.fjt.wait_for_server(timeout_sec=20)
                wait_for(lambda: client.pose is not None and client.contacts is not None and
                         client.tf is not None, 15, message='base pose, contacts and /tf')
                wait_for(client.standing, 10, message=lambda: f'standing (height '
                         f'{client.height():.3f} m, contacts {client.contacts.in_contact})')
                yield client


def cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run `sweetie-motion ARGS --namespace NS` in a process of its own."""
    return subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', *args, '--namespace', NS],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def test_the_base_pose_and_the_contacts_are_published(pony):
    assert pony.pose.header.frame_id == 'odom'
    assert pony.height() == pytest.approx(STANDING, abs=0.01)
    transform = pony.tf.transforms[0]
    assert (transform.header.frame_id, transform.child_frame_id) == ('odom', 'base_link')
    assert transform.transform.translation.z == pytest.approx(STANDING, abs=0.01)
    contacts = pony.contacts
    assert list(contacts.name) == ['leg1', 'leg2', 'leg3', 'leg4']
    assert all(contacts.in_contact)
    # the floor carries the pony: its hooves' vertical forces add up to its weight
    assert sum(f.z for f in contacts.force) == pytest.approx(WEIGHT, rel=0.05)
    hips = [(p.x, p.y) for p in contacts.position]
    assert all(abs(abs(x) - 0.0804) < 0.01 and abs(abs(y) - 0.037) < 0.01 for x, y in hips)


def test_joint_states_carry_the_simulated_efforts(pony):
    messages = []

    def ten_messages():
        msg = pony.joint_states
        if not messages or messages[-1] is not msg:
            messages.append(msg)
        return len(messages) >= 10
    wait_for(ten_messages, 10, message='ten joint_states messages')
    msg = messages[-1]
    assert len(msg.name) == len(msg.position) == len(msg.velocity) == len(msg.effort) == 32
    # the median of ten: a loaded machine's late step shakes a single message
    efforts = dict(zip(msg.name, np.median([m.effort for m in messages], axis=0)))
    # the neck's pitch servos hold the head up against gravity (0.13-0.15 N*m at rest); the
    # yaw servo between them, about the vertical, holds nothing
    assert efforts['joint51'] > 0.06 and efforts['joint53'] > 0.06, efforts
    assert abs(efforts['joint52']) < 0.03, efforts
    assert all(abs(e) <= 1.18 + 1e-6 for m in messages for e in m.effort), \
        'a servo beyond its stall torque'


def test_follow_joint_state_moves_a_joint_of_the_physics_robot(pony):
    pony.stream('joint_states_set', ['joint52'], [0.3],
                lambda: abs(pony.position('joint52') - 0.3) < 0.02, 'the head turned')
    pony.stream('joint_states_set', ['joint52'], [0.0],
                lambda: abs(pony.position('joint52')) < 0.02, 'the head back')


def test_a_follow_joint_trajectory_goal_succeeds(pony):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ['joint51', 'joint52', 'joint53']
    for t, row in ((1.0, [-0.3, 0.4, 0.3]), (2.0, [0.0, -0.2, 0.1]), (3.0, [0.0, 0.0, 0.0])):
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=row, time_from_start=Duration(sec=int(t))))
    handle = wait_future(pony.fjt.send_goal_async(goal), 10)
    assert handle.accepted
    result = wait_future(handle.get_result_async(), 20)
    assert result.status == GoalStatus.STATUS_SUCCEEDED, result.result.error_string
    assert result.result.error_code == 0


def test_a_stored_motion_plays_and_the_pony_stays_up(pony):
    pony.recording.set()
    try:
        played = cli('play', 'nod')
    finally:
        pony.recording.clear()
    assert played.returncode == 0, played.stdout + played.stderr
    assert 'succeeded' in played.stdout
    assert len(pony.poses) > 50, 'the base pose streams while the motion plays'
    worst = max(tilt_of(p) for p in pony.poses)
    assert worst < math.radians(5), f'nod tilted the pony {math.degrees(worst):.1f} deg'
    assert min(p.pose.position.z for p in pony.poses) > STANDING - 0.02
    wait_for(pony.standing, 5, message='standing after nod')


def test_torque_off_drops_a_lifted_leg_and_reset_stands_the_pony_up(pony):
    pony.stream('joint_states_set', list(LIFTED), list(LIFTED.values()),
                lambda: not pony.foot('leg1')[0] and pony.foot('leg1')[1] > 0.05,
                'leg1 lifted', timeout=15)
    lifted = pony.foot('leg1')[1]
    # the switch's service, called from this process: leg1's servos go limp
    chains = pony.node.create_client(SetChainsTorque, f'/{NS}/set_chains_torque')
    assert chains.wait_for_service(timeout_sec=10)
    response = call_idempotent(
        chains, SetChainsTorque.Request(chains=['leg1'], torque_off=True), 10)
    assert response.success, response.message
    wait_for(lambda: pony.foot('leg1')[0], 10,
             message=lambda: f'leg1 down (hoof at {pony.foot("leg1")[1]:.3f} m)')
    assert pony.foot('leg1')[1] < lifted - 0.015
    assert pony.position('joint13') < LIFTED['joint13'] - 0.2, 'the knee dropped'

    # every servo off: the pony sags to the floor
    response = pony.call_bool('set_torque_off', True)
    assert response.success, response.message
    wait_for(lambda: pony.height() < STANDING - 0.05, 10,
             message=lambda: f'the pony sagging (height {pony.height():.3f} m)')
    response = pony.call_bool('set_torque_off', False)
    assert response.success, response.message
    # the servos hold the pose they sagged into; the zero pose is asked for again, and reset
    # puts the joints where their servos are told to be
    servos = [f'joint{leg}{k}' for leg in (1, 2, 3, 4) for k in (1, 2, 3, 4, 5)]
    pony.stream('joint_states_set', servos, [0.0] * len(servos),
                lambda: all(abs(pony.position(j, 'reference')) < 0.01 for j in servos),
                'the reference back at zero', timeout=15)
    wait_for(lambda: np.max(np.abs(pony.reference.velocity)) < 1e-3, 10,
             message='the reference at rest')

    # another process stands it up again: `sweetie-motion reset`
    reset = cli('reset')
    assert reset.returncode == 0, reset.stdout + reset.stderr
    assert 'stood up' in reset.stdout
    wait_for(pony.standing, 10, message=lambda: f'standing after reset (height '
             f'{pony.height():.3f} m, tilt {math.degrees(pony.tilt()):.1f} deg, contacts '
             f'{list(pony.contacts.in_contact)})')


def test_the_editor_draws_the_pony_where_the_physics_has_it(pony, qtbot, tmp_path):
    # #34 item 4: the editor's 3D view takes the physics robot's base pose (standing on the
    # floor, upright), and draws the hooves on the floor grid (z = 0)
    from sweetie_motion.editor.app import build_editor
    from sweetie_motion.ros.background import BackgroundNode
    ros = BackgroundNode('editor_on_physics', ['editor_on_physics', '--ros-args', '-p',
                                               f'namespace:={NS}', '-p',
                                               f'workspace_dir:={tmp_path}'])
    editor = None
    try:
        editor = build_editor(ros.node, poses={})
        window = editor.window
        qtbot.addWidget(window)
        window.show()

        def drawn_standing() -> bool:
            base = window.robot_view.base
            return base is not None and abs(base[1][2] - STANDING) < 0.01 and \
                base[0][2][2] > math.cos(math.radians(3))
        qtbot.waitUntil(drawn_standing, timeout=30000)
        window.robot_view.redraw()
        hooves = [window.robot_view.link_position(f'hoof{k}')[2] for k in range(1, 5)]
        assert max(abs(z) for z in hooves) < 0.02, hooves      # on the floor
    finally:
        if editor is not None:
            editor.window.stops.leaving = True
            editor.window.close()
        ros.close(editor.bridge.close if editor is not None else None)


@pytest.mark.parametrize('name, value, message', [
    ('world_frame', '', 'world_frame: must not be empty'),
    ('base_frame', '/base_link', 'base_frame: '),
    ('max_catch_up', 0, 'max_catch_up: must be >= 1'),
    ('publish_rate', 'fast', 'publish_rate: expected float'),
])
def test_a_bad_parameter_of_the_physics_robot_is_one_line_naming_it(name, value, message):
    spec = next(s for s in PhysicsRobotNode.PARAMETERS if s.name == name)
    with pytest.raises(ParameterError) as error:
        spec.validate(value)
    assert str(error.value).startswith(message) and '\n' not in str(error.value)
