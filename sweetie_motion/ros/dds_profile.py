"""
The Fast DDS profile of the package's processes (config/fastdds_profile.xml), unless the user's.

A process that joins a running motion process (a command, the editor, the console) is sent
the motion process's several hundred DDS endpoints at once. With Fast DDS's default UDP
receive buffer (212 992 bytes) hundreds of those datagrams were dropped at every start
(``/proc/net/udp``: 129-931 per ``play``), and what was dropped came again only with the next
discovery heartbeat: a command waited 1-2.5 s for a service instead of 0.05 s. The profile asks
for 4 MB buffers (the kernel caps them at ``net.core.rmem_max``). Pure: no rclpy; it must run
before the process's first rclpy context.
"""

import os
from pathlib import Path
from typing import MutableMapping, Optional

#: the RMW implementations that read Fast DDS profiles ('' : the default, Fast DDS)
FAST_DDS_RMWS = ('', 'rmw_fastrtps_cpp', 'rmw_fastrtps_dynamic_cpp')
#: the variables by which a user names a profile of their own (Fast DDS 2, Fast DDS 3)
PROFILE_VARIABLES = ('FASTRTPS_DEFAULT_PROFILES_FILE', 'FASTDDS_DEFAULT_PROFILES_FILE')
#: the profile Fast DDS loads from the working directory when it finds one there
LOCAL_PROFILE = 'DEFAULT_FASTRTPS_PROFILES.xml'


def package_profile() -> Path:
    """Return the package's Fast DDS profile."""
    from sweetie_motion.paths import share_dir
    return share_dir() / 'config' / 'fastdds_profile.xml'


def use_package_profile(environ: Optional[MutableMapping[str, str]] = None) -> bool:
    """
    Point Fast DDS at the package's profile, unless the user configured DDS themselves.

    Left alone: another RMW, a profile named in the environment, or one in the working
    directory. Children started after this inherit the choice.

    :return: whether the package's profile is in force now.
    """
    environ = os.environ if environ is None else environ
    if environ.get('RMW_IMPLEMENTATION', '') not in FAST_DDS_RMWS:
        return False
    mine = str(package_profile())
    if not os.path.isfile(mine):
        return False
    if any(environ.get(name) for name in PROFILE_VARIABLES):
        return environ.get(PROFILE_VARIABLES[0]) == mine
    if os.path.isfile(LOCAL_PROFILE):
        return False
    environ[PROFILE_VARIABLES[0]] = mine
    return True
