"""
The Fast DDS profiles of the package's processes, unless the user configured DDS.

A client that joins a running motion process (a command, the editor, the console, the demo's
client) is sent the motion process's several hundred DDS endpoints at once. With Fast DDS's
default UDP receive buffer (212 992 bytes) hundreds of those datagrams were dropped at every
start (``/proc/net/udp``: 129-931 per ``play``), and what was dropped came again only with the
next discovery heartbeat: a command waited 1-2.5 s for a service instead of 0.05 s. The
profiles (config/fastdds_profile*.xml) give the client a UDP transport with 4 MB buffers (the
kernel caps them at ``net.core.rmem_max``).

The motion process has a profile of its own (config/fastdds_motion_profile.xml) that names no
transport: with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` the RMW adds its own UDP transport
beside a profile's, and a process with two sends its discovery data twice — measured, plain
clients (the ``ros2`` CLI, MoveIt) then lost more of it (drops per start 0-1117 instead of
107-578). What it changes: the motion process announces itself every 0.25 s instead of every
3 s. A joining participant missed the motion process's answer to its first announcement in
about half of its starts (captured on lo) and found it only at the next periodic one: the wait
of ``play`` for its action was 0.04 s or 1.2-3 s at random (12 starts: median 0.8 s, max
2.96 s); with the profile, median 0.15 s, max 0.61 s.
Pure: no rclpy; it must run before the process's first rclpy context.
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
#: the client profile for discovery on this machine only, and the one for any other range
PROFILES = {True: 'fastdds_profile_localhost.xml', False: 'fastdds_profile.xml'}
#: the motion process's profile, for any range
MOTION_PROFILE = 'fastdds_motion_profile.xml'


def package_profile(localhost: bool) -> Path:
    """Return the package's client profile for discovery on this machine only or beyond."""
    from sweetie_motion.paths import share_dir
    return share_dir() / 'config' / PROFILES[localhost]


def motion_profile() -> Path:
    """Return the motion process's profile."""
    from sweetie_motion.paths import share_dir
    return share_dir() / 'config' / MOTION_PROFILE


def _localhost(environ: MutableMapping[str, str]) -> bool:
    # ROS_LOCALHOST_ONLY is deprecated in Jazzy but still wins over the range
    return (environ.get('ROS_LOCALHOST_ONLY') == '1'
            or environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE') == 'LOCALHOST')


def discovery_reaches_other_machines(environ: Optional[MutableMapping[str, str]] = None
                                     ) -> bool:
    """
    Return whether DDS discovery may find participants on other machines.

    False only when it is kept on this machine: ``ROS_AUTOMATIC_DISCOVERY_RANGE`` LOCALHOST
    (or ``ROS_LOCALHOST_ONLY=1``) or OFF, with no ``ROS_STATIC_PEERS`` and no DDS profile of
    the user's own (either may name peers elsewhere).
    """
    environ = os.environ if environ is None else environ
    if environ.get('ROS_STATIC_PEERS', '').strip():
        return True
    named = environ.get(PROFILE_VARIABLES[0]) or environ.get(PROFILE_VARIABLES[1])
    if named and not _ours(named):
        return True
    return not (_localhost(environ) or environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE') == 'OFF')


def _ours(value: Optional[str]) -> bool:
    return bool(value) and value in {str(package_profile(flag)) for flag in (True, False)} | {
        str(motion_profile())}


def _use(environ: MutableMapping[str, str], mine: str) -> bool:
    """Put the package's profile ``mine`` in force unless the user configured DDS."""
    if environ.get('RMW_IMPLEMENTATION', '') not in FAST_DDS_RMWS:
        return False
    if not os.path.isfile(mine):
        return False
    named = [environ.get(name) for name in PROFILE_VARIABLES]
    if any(named) and not _ours(named[0]):
        return False   # the user's own (a profile of ours it inherited is replaced)
    if not any(named) and os.path.isfile(LOCAL_PROFILE):
        return False
    environ[PROFILE_VARIABLES[0]] = mine
    return True


def use_package_profile(environ: Optional[MutableMapping[str, str]] = None) -> bool:
    """
    Point Fast DDS at the package's client profile, unless the user configured DDS themselves.

    Left alone: another RMW, a profile named in the environment, or one in the working
    directory. Children started after this inherit the choice (a motion process started by
    a client takes its own: :func:`use_motion_profile`).

    :return: whether the package's profile is in force now.
    """
    environ = os.environ if environ is None else environ
    return _use(environ, str(package_profile(_localhost(environ))))


def use_motion_profile(environ: Optional[MutableMapping[str, str]] = None) -> bool:
    """
    Point Fast DDS at the motion process's profile, unless the user configured DDS themselves.

    A client profile the process inherited (an editor that started its own bringup) is
    replaced; what :func:`use_package_profile` leaves alone is left alone here too.

    :return: whether the motion process's profile is in force now.
    """
    environ = os.environ if environ is None else environ
    return _use(environ, str(motion_profile()))
