"""The namespace lock: one motion process per namespace and ROS domain on a machine."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from sweetie_motion.process_lock import lock_path, NamespaceLock, this_process


@pytest.fixture(autouse=True)
def lock_folder(tmp_path, monkeypatch):
    monkeypatch.setenv('SWEETIE_MOTION_LOCK_DIR', str(tmp_path / 'locks'))
    monkeypatch.setenv('ROS_DOMAIN_ID', '7')
    return tmp_path / 'locks'


def test_the_second_is_refused_naming_the_first_until_the_first_ends():
    first, second = NamespaceLock('sweetie_bot'), NamespaceLock('sweetie_bot')
    assert first.acquire() == ''
    assert second.acquire() == this_process()
    assert not second.held
    first.release()
    assert second.acquire() == ''
    second.release()


def test_another_namespace_or_domain_is_another_lock():
    pony = NamespaceLock('sweetie_bot')
    assert pony.acquire() == ''
    assert NamespaceLock('winding_arm').acquire() == ''
    assert NamespaceLock('sweetie_bot', domain_id='8').acquire() == ''
    assert NamespaceLock('/sweetie_bot/').acquire() != ''   # the same namespace written so
    pony.release()


def test_the_file_is_named_for_the_domain_and_the_namespace(lock_folder):
    assert lock_path('sweetie_bot') == str(lock_folder / 'domain7-sweetie_bot.lock')
    assert lock_path('', domain_id='') == str(lock_folder / 'domain0-.root.lock')
    assert lock_path('a/b') == str(lock_folder / 'domain7-a.b.lock')


def test_a_killed_holder_leaves_no_lock_behind(lock_folder):
    holder = subprocess.Popen([sys.executable, '-c', textwrap.dedent("""
        import sys, time
        from sweetie_motion.process_lock import NamespaceLock
        lock = NamespaceLock('sweetie_bot')
        print(repr(lock.acquire()), flush=True)
        time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert holder.stdout.readline().strip() == "''"
        assert NamespaceLock('sweetie_bot').acquire() == \
            f'host {os.uname().nodename}, pid {holder.pid}'
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    lock = NamespaceLock('sweetie_bot')
    assert lock.acquire() == ''    # the file is still there; the kernel dropped the lock
    lock.release()
