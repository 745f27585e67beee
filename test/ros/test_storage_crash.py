"""
Crash safety of trajectory storage (R-STORE-2).

A storage process killed with SIGKILL in the middle of a stream of saves loses no acknowledged
trajectory and leaves no corrupt file.
"""

import os
from pathlib import Path
import random
import signal
import threading
import time

from motion_process import motion_process
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import ListParameters, SetParameters
from ros_util import call_idempotent, RosPeer, wait_for
from sweetie_motion.ros.conversions import byte_array_value, goal_to_bytes
from sweetie_motion.storage.store import TrajectoryStore
from sweetie_motion.trajectory.codec import load_goal_file
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_crash'


def config(tmp: Path, storage: Path) -> str:
    path = tmp / 'storage_only.yaml'
    path.write_text(f"""
sweetie_motion:
  namespace: {NS}
  robot: sweetie_bot.yaml
  components:
    - name: trajectory_storage
      type: trajectory_storage
      parameters: {{storage_dir: '{storage}', library_dirs: []}}
""")
    return str(path)


def trajectory(k: int) -> TrajectoryGoal:
    # big enough that a write takes a while: 60 points x 30 joints
    joints = [f'joint{leg}{j}' for leg in range(1, 5) for j in range(1, 6)] + \
        ['joint51', 'joint52', 'joint53', 'joint54', 'eyes_yaw', 'eyes_pitch',
         'joint16', 'joint26', 'joint36', 'joint46']
    points = [TrajectoryPoint(0.1 * (p + 1),
                              [0.001 * ((k + p + j) % 100) for j in range(len(joints))])
              for p in range(60)]
    return TrajectoryGoal(joints, points)


def test_sigkill_during_saves_loses_no_acknowledged_trajectory(domain_id, tmp_path):
    storage = tmp_path / 'store'
    path = config(tmp_path, storage)
    acknowledged = []
    with RosPeer('crash_saver', domain_id) as peer:
        client = peer.node.create_client(SetParameters,
                                         f'/{NS}/trajectory_storage/set_parameters')
        with motion_process(path, NS) as process:
            assert client.wait_for_service(timeout_sec=20)
            stop = threading.Event()
            # the kill comes at a random moment once the saves stream (a fixed time after the
            # start could fall before the first save on a loaded machine)
            killer = threading.Timer(random.uniform(0.0, 1.5),
                                     lambda: os.kill(process.popen.pid, signal.SIGKILL))
            armed = False
            give_up = time.monotonic() + 60
            k = 0
            while process.alive() and k < 10_000:
                if not armed and len(acknowledged) >= 5:
                    killer.start()
                    armed = True
                assert armed or time.monotonic() < give_up, 'the saves did not get going'
                name = f'take_{k}'
                value = ParameterValue(type=ParameterType.PARAMETER_BYTE_ARRAY,
                                       byte_array_value=byte_array_value(
                                           goal_to_bytes(trajectory(k))))
                future = client.call_async(SetParameters.Request(parameters=[
                    ParameterMsg(name=f'joint_trajectory.{name}', value=value)]))
                deadline = time.monotonic() + 5
                while not future.done() and time.monotonic() < deadline and process.alive():
                    time.sleep(0.001)
                if future.done() and future.result().results[0].successful:
                    acknowledged.append(name)   # the node answered: it claims it is on disk
                k += 1
            stop.set()
            assert armed, f'the motion process died by itself after {k} saves'
            killer.join()
            process.popen.wait(10)
            assert process.popen.returncode == -signal.SIGKILL
            process.popen.returncode = 0  # killed on purpose: the fixture must not complain
        assert len(acknowledged) >= 5, 'the loop did not get going before the kill'

    # every acknowledged trajectory is on disk, intact; no file is half-written
    files = {p.stem: p for p in storage.glob('*.yaml')}
    for name in acknowledged:
        assert name in files, f'acknowledged {name} was lost'
        goal = load_goal_file(files[name])
        assert goal.points[59].positions == trajectory(int(name[5:])).points[59].positions
    for file in files.values():
        load_goal_file(file)   # raises on a corrupt file
    report = TrajectoryStore(storage).load()
    assert not report.problems
    assert set(acknowledged) <= set(report.loaded)
    assert not list(storage.glob('.*.tmp')), 'leftover temp files are removed at load'

    # and a restarted storage node serves every one of them again
    with RosPeer('crash_checker', domain_id) as peer:
        with motion_process(path, NS):
            lister = peer.node.create_client(ListParameters,
                                             f'/{NS}/trajectory_storage/list_parameters')
            assert lister.wait_for_service(timeout_sec=20)
            names = []

            def listed():
                # asked again when an answer is lost (a node just up may drop the first)
                names[:] = call_idempotent(lister, ListParameters.Request(
                    prefixes=['joint_trajectory']), 10).result.names
                return len(names) >= len(acknowledged)
            wait_for(listed, 20, period=0.5, message='parameters after the restart')
            assert {f'joint_trajectory.{n}' for n in acknowledged} <= set(names)
