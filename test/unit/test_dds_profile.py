"""The package's clients use its Fast DDS profile unless the user configured DDS themselves."""

from sweetie_motion.ros.dds_profile import (
    discovery_reaches_other_machines, motion_profile, package_profile, use_motion_profile,
    use_package_profile,
)


def test_a_client_uses_the_profile_of_its_discovery_range(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    environ = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    assert use_package_profile(environ)
    assert environ['FASTRTPS_DEFAULT_PROFILES_FILE'] == str(package_profile(True))
    # asked again (a second client in the process): still in force, nothing else changed
    assert use_package_profile(environ) and len(environ) == 2
    for other in ({}, {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET'}):
        assert use_package_profile(other)
        assert other['FASTRTPS_DEFAULT_PROFILES_FILE'] == str(package_profile(False))
    assert package_profile(True).is_file() and package_profile(False).is_file()
    # the deprecated variable still means this machine only
    environ = {'ROS_LOCALHOST_ONLY': '1'}
    assert use_package_profile(environ)
    assert environ['FASTRTPS_DEFAULT_PROFILES_FILE'] == str(package_profile(True))


def test_a_users_profile_or_another_rmw_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for variable in ('FASTRTPS_DEFAULT_PROFILES_FILE', 'FASTDDS_DEFAULT_PROFILES_FILE'):
        environ = {variable: '/home/me/my_dds.xml'}
        assert not use_package_profile(environ)
        assert environ == {variable: '/home/me/my_dds.xml'}
        assert not use_motion_profile(environ)   # a motion process keeps the user's too
        assert environ == {variable: '/home/me/my_dds.xml'}
    environ = {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}
    assert not use_package_profile(environ) and len(environ) == 1
    environ = {'RMW_IMPLEMENTATION': 'rmw_fastrtps_cpp'}
    assert use_package_profile(environ)
    # Fast DDS loads a profile it finds in the working directory: that one is the user's
    (tmp_path / 'DEFAULT_FASTRTPS_PROFILES.xml').write_text('<profiles/>')
    environ = {}
    assert not use_package_profile(environ) and environ == {}


def test_a_motion_process_takes_its_own_profile_also_when_a_client_started_it(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    environ = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    use_package_profile(environ)      # the editor, say, which then starts its own bringup
    assert use_motion_profile(environ)
    assert environ['FASTRTPS_DEFAULT_PROFILES_FILE'] == str(motion_profile())
    assert motion_profile().is_file()
    # and a client the motion process starts takes the client's again
    assert use_package_profile(environ)
    assert environ['FASTRTPS_DEFAULT_PROFILES_FILE'] == str(package_profile(True))
    environ = {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}
    assert not use_motion_profile(environ) and len(environ) == 1


def test_discovery_reaches_other_machines_unless_kept_on_this_one(tmp_path):
    mine = str(tmp_path / 'mine.xml')
    for environ in ({}, {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET'},
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SYSTEM_DEFAULT'},
                    # peers named: they may be elsewhere, whatever the range
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                     'ROS_STATIC_PEERS': '192.168.1.7'},
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF', 'ROS_STATIC_PEERS': 'robot.local'},
                    # a profile of the user's own may name peers too
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                     'FASTRTPS_DEFAULT_PROFILES_FILE': mine}):
        assert discovery_reaches_other_machines(environ), environ
    for environ in ({'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'},
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF'}, {'ROS_LOCALHOST_ONLY': '1'},
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'ROS_STATIC_PEERS': ' '},
                    # the package's own profile names no peer
                    {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                     'FASTRTPS_DEFAULT_PROFILES_FILE': str(motion_profile())}):
        assert not discovery_reaches_other_machines(environ), environ
