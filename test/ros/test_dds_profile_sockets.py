"""
A client of the package gets the large DDS receive buffers; a user's own profile wins.

The suite runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (conftest): the profile that adds
a UDP transport beside the RMW's own.

A command joining a running motion process is sent several hundred endpoints at once: with
the default 212 992-byte UDP buffers hundreds of datagrams were dropped at every start and
the command waited for the next discovery heartbeat (config/fastdds_profile.xml).
"""

import json
import os
import subprocess
import sys

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
