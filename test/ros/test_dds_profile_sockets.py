"""
A client of the package gets the large DDS receive buffers; a user's own profile wins.

The motion process announces itself four times a second (config/fastdds_motion_profile.xml):
a participant that missed its answer at its start finds it within 0.25 s, not 3 s.

The suite runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (conftest): the profile that adds
a UDP transport beside the RMW's own.

A command joining a running motion process is sent several hundred endpoints at once: with
the default 212 992-byte UDP buffers hundreds of datagrams were dropped at every start and
the command waited for the next discovery heartbeat (config/fastdds_profile.xml).
"""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.ros

#: a fresh process (Fast DDS reads its profile once per process) that makes a client's node
#: and reports the receive buffer of each of its UDP sockets
PROBE = """
import json, os, socket
from sweetie_motion.ros.background import BackgroundNode
node = BackgroundNode('profile_probe', lean=True)
sizes = []
for fd in os.listdir('/proc/self/fd'):
    try:
        target = os.readlink(f'/proc/self/fd/{fd}')
    except OSError:
        continue
    if target.startswith('socket:'):
        probe = socket.socket(fileno=os.dup(int(fd)))
        if probe.type == socket.SOCK_DGRAM and probe.family == socket.AF_INET:
            sizes.append(probe.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
        probe.close()   # the duplicate
node.close()
print(json.dumps(sizes))
"""


def receive_buffers(environ):
    result = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, text=True,
                            env=environ, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def rmem_max():
    with open('/proc/sys/net/core/rmem_max') as limit:
        return int(limit.read())


def test_a_clients_udp_sockets_get_the_large_buffers_and_a_users_profile_wins(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.endswith('DEFAULT_PROFILES_FILE')}
    default = 212992
    wanted = min(4 * 1024 * 1024, rmem_max())
    sizes = receive_buffers(environ)
    # the kernel reports twice what was set (its bookkeeping)
    assert sizes and max(sizes) >= 2 * wanted, (sizes, wanted)
    own = tmp_path / 'mine.xml'
    own.write_text('<?xml version="1.0" encoding="UTF-8" ?>\n<profiles xmlns='
                   '"http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"/>\n')
    sizes = receive_buffers(dict(environ, FASTRTPS_DEFAULT_PROFILES_FILE=str(own)))
    assert sizes and max(sizes) <= 2 * default, sizes


#: a process that starts ROS as the bringup does (its init_ros), with one node, for a while
MOTION_PROBE = """
import sys, time
import rclpy
from sweetie_motion.nodes.bringup import init_ros
init_ros([])
node = rclpy.create_node('announcing_probe')
time.sleep(float(sys.argv[1]))
node.destroy_node()
rclpy.shutdown()
"""
#: a participant id no process of a fresh domain takes: Fast DDS announces itself to the
#: discovery port of every id up to its initial peers' range on this machine
UNUSED_PARTICIPANT = 30


def announcements(environ, domain: int, seconds: float = 4.0):
    """Return when (s after the first) a fresh ROS process's announcements reached a port."""
    port = 7400 + 250 * domain + 10 + 2 * UNUSED_PARTICIPANT
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    receiver.bind(('127.0.0.1', port))
    receiver.settimeout(0.2)
    process = subprocess.Popen([sys.executable, '-c', MOTION_PROBE, str(seconds)], env=environ,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    times = []
    try:
        deadline = time.monotonic() + seconds + 30
        while process.poll() is None and time.monotonic() < deadline:
            try:
                datagram = receiver.recv(65536)
            except socket.timeout:
                continue
            if datagram.startswith(b'RTPS'):
                times.append(time.monotonic())
        output = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        receiver.close()
    assert process.returncode == 0, output[1]
    assert 'XMLPARSER' not in output[1] and 'Error' not in output[1], output[1]
    return [t - times[0] for t in times]


def test_the_motion_process_announces_itself_four_times_a_second(domain_id):
    environ = {k: v for k, v in os.environ.items() if not k.endswith('DEFAULT_PROFILES_FILE')}
    if environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE') != 'LOCALHOST':
        pytest.skip('the count is taken at a port on this machine (LOCALHOST discovery)')
    # after the initial announcements (five in the first half second), the periodic ones
    later = [t for t in announcements(environ, domain_id) if 1.0 <= t <= 3.5]
    assert len(later) >= 8, later        # every 0.25 s: ~10
    # Fast DDS's default, for comparison: every 3 s
    environ['FASTRTPS_DEFAULT_PROFILES_FILE'] = os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), 'test', 'data', 'empty_dds_profile.xml')
    later = [t for t in announcements(environ, domain_id) if 1.0 <= t <= 3.5]
    assert len(later) <= 2, later
