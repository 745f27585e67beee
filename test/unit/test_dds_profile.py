"""The package's Fast DDS profile is used unless the user configured DDS themselves."""

from sweetie_motion.ros.dds_profile import package_profile, use_package_profile


def test_the_packages_profile_is_used_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    environ = {}
    assert use_package_profile(environ)
    assert environ == {'FASTRTPS_DEFAULT_PROFILES_FILE': str(package_profile())}
    assert package_profile().is_file()
    # asked again (a second client in the process): still in force, nothing else changed
    assert use_package_profile(environ) and len(environ) == 1


def test_a_users_profile_or_another_rmw_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for variable in ('FASTRTPS_DEFAULT_PROFILES_FILE', 'FASTDDS_DEFAULT_PROFILES_FILE'):
        environ = {variable: '/home/me/my_dds.xml'}
        assert not use_package_profile(environ)
        assert environ == {variable: '/home/me/my_dds.xml'}
    environ = {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}
    assert not use_package_profile(environ) and len(environ) == 1
    environ = {'RMW_IMPLEMENTATION': 'rmw_fastrtps_cpp'}
    assert use_package_profile(environ)
    # Fast DDS loads a profile it finds in the working directory: that one is the user's
    (tmp_path / 'DEFAULT_FASTRTPS_PROFILES.xml').write_text('<profiles/>')
    environ = {}
    assert not use_package_profile(environ) and environ == {}
