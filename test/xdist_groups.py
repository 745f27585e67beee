"""Which tests share an xdist worker (make test runs two; see conftest.py)."""

#: folders whose tests share session-scoped processes: under pytest-xdist they stay on one worker
#: (the editor's motion process is started once and ended after its folder's last test)
_ONE_WORKER_FOLDERS = ('editor',)
#: files whose bringups run heavy real-time work (the servo simulators and line threads, the
#: physics stepped in the cycle): two at once on 2 cores starve every normal thread (a
#: bringup's executor answered nothing for 60 s), so they take turns on one worker
_REAL_TIME_FILES = ('test_servo_stack.py', 'test_parameters.py', 'test_servo_control_delay.py',
                    'test_physics_robot.py')


def group_of(nodeid: str) -> str:
    """
    Return the group of a test (its nodeid): the tests of a group run on one xdist worker.

    A file is a group; a folder of :data:`_ONE_WORKER_FOLDERS` is one whole, and the files of
    :data:`_REAL_TIME_FILES` share one.
    """
    path = nodeid.split('::', 1)[0]
    folder, _, name = path.rpartition('/')
    if name in _REAL_TIME_FILES:
        return 'real-time servo simulators'
    folder = folder.rpartition('/')[2]
    return folder if folder in _ONE_WORKER_FOLDERS else path
