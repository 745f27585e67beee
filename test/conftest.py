"""Test-suite wide setup: DDS stays on this machine, every ROS test gets its own domain."""

import os
import re
import signal
import sys

from domains import next_domain_id
import pytest
from xdist_groups import group_of

# Before anything can import rclpy: discovery on the loopback only, never on eth0.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.pop('ROS_LOCALHOST_ONLY', None)
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
os.environ.setdefault('QT_QPA_PLATFORM', 'offscreen')
os.environ.setdefault('PYTHONUNBUFFERED', '1')

os.environ['ROS_DOMAIN_ID'] = str(next_domain_id())

# Tests press Ctrl+C as a terminal does (SIGINT). A suite started in the background by a
# script (`cmd &`, nohup) inherits SIGINT ignored, and so would every process it starts:
# Python then installs no KeyboardInterrupt handler and Ctrl+C would do nothing.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


#: what ``--without-ros-and-qt`` hides: rclpy, every ROS interface package, Qt
_ROS_AND_QT = ('rclpy', 'rcl_interfaces', 'sensor_msgs', 'trajectory_msgs', 'control_msgs',
               'std_msgs', 'std_srvs', 'builtin_interfaces', 'sweetie_motion_msgs',
               'diagnostic_msgs', 'lifecycle_msgs', 'action_msgs', 'geometry_msgs',
               'PyQt5', 'pytestqt')


class _HideRosAndQt:
    """An import hook that makes ROS and Qt look uninstalled."""

    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in _ROS_AND_QT:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None


def pytest_addoption(parser):
    """Add ``--without-ros-and-qt`` (make test-fast: the unit layer needs neither)."""
    parser.addoption('--without-ros-and-qt', action='store_true',
                     help='run as if rclpy, the ROS message packages and Qt were not installed')


def pytest_configure(config):
    """Hide ROS and Qt when asked to, before any test module is imported."""
    if config.getoption('--without-ros-and-qt'):
        sys.meta_path.insert(0, _HideRosAndQt())


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """
    Schedule ``--dist loadgroup`` by :func:`xdist_groups.group_of`.

    pytest-xdist's own loadgroup reads a group from a suffix it appends to each test's nodeid,
    which pytest 9 ignores (a node's id is no longer ``_nodeid``): every test became a group of
    its own, module fixtures were set up once per worker and the editor's folder ran on both.
    """
    if config.getvalue('dist') != 'loadgroup':
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)
    return GroupScheduling(config, log)


#: a test module whose import fails like this is skipped (unless every dependency is required)
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """
    Skip a test module that needs a dependency this environment lacks (rclpy, Qt, pinocchio).

    A layer runs where its dependencies are: test/unit without ROS or Qt, test/ros without
    Qt. ``make test`` sets SWEETIE_MOTION_TEST_STRICT=1, so that a missing install step fails
    there instead of hiding as a skip; our own package's import errors always fail.
    """
    outcome = yield
    report = outcome.get_result()
    if not report.failed or not isinstance(collector, pytest.Module) or \
            os.environ.get('SWEETIE_MOTION_TEST_STRICT') == '1':
        return
    found = _MISSING_MODULE.search(str(report.longrepr))
    if found is None or found.group(1).split('.')[0] == 'sweetie_motion':
        return
    report.outcome = 'skipped'
    report.longrepr = (str(collector.path), 0, f'Skipped: {found.group(1)} is not installed')


@pytest.fixture
def domain_id(monkeypatch) -> int:
    """Give the test its own ROS_DOMAIN_ID, for itself and the processes it starts."""
    value = next_domain_id()
    monkeypatch.setenv('ROS_DOMAIN_ID', str(value))
    return value


@pytest.fixture
def artifacts_dir():
    """Directory for screenshots and plots that tests write for people to look at."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'artifacts', 'test')
    os.makedirs(path, exist_ok=True)
    return path


def _configured(description: str):
    from sweetie_motion.model import load_robot_description
    model = load_robot_description(description)
    model.configure()
    return model


@pytest.fixture(scope='module')
def pony():
    """Return the pony's configured robot model (one per test module: tests may change it)."""
    return _configured('sweetie_bot.yaml')


@pytest.fixture(scope='module')
def arm():
    """Return the winding arm's configured robot model (one per test module)."""
    return _configured('winding_arm.yaml')


@pytest.fixture(scope='module')
def model(pony):
    """Return the default robot model: the pony's."""
    return pony
