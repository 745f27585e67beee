"""
Console tests in a real window against the winding arm's bringup on the virtual robot.

The display is the editor tests' session fixture (test/editor/conftest.py: Xvfb + openbox when
no display is given, offscreen with the reason otherwise), imported here rather than copied.
Each test module runs the arm's motion process as a user starts it, in a ROS domain of its own.
"""

import importlib.util
from pathlib import Path
import sys

import pytest

HERE = Path(__file__).resolve().parent
# the editor's conftest imports its helpers by module name
sys.path.insert(0, str(HERE.parent / 'editor'))


def _editor_conftest():
    spec = importlib.util.spec_from_file_location('editor_conftest',
                                                  HERE.parent / 'editor' / 'conftest.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_EDITOR = _editor_conftest()
#: the session's display (an own Xvfb + openbox, the user's, or offscreen with the reason)
display = _EDITOR.display


@pytest.fixture(scope='session')
def arm_model():
    """Return the winding arm's configured robot model."""
    from sweetie_motion.model import load_robot_description
    model = load_robot_description('winding_arm.yaml')
    model.configure()
    return model


@pytest.fixture(scope='module')
def arm_domain(request):
    """Give the module a ROS domain of its own (the motion process, the console, the peer)."""
    from domains import own_domain
    with own_domain() as domain:
        yield domain


@pytest.fixture(scope='module')
def arm(arm_domain):
    """Run the arm's bringup for the module; yield a peer that records joint_states_ref."""
    from console_helpers import NODES, start_arm
    from motion_process import MotionClient
    namespace = 'console_arm'
    with start_arm(namespace):
        with MotionClient(namespace, arm_domain) as peer:
            peer.wait_ready(NODES)
            peer.namespace = namespace
            yield peer


@pytest.fixture
def console(qtbot, arm, arm_model):
    """Open a console on the module's arm; wait until it shows the motion process connected."""
    from console_helpers import open_console
    with open_console(qtbot, arm.namespace, arm_model) as opened:
        yield opened


@pytest.fixture
def shots(artifacts_dir, request):
    """Return the screenshot taker: called with the console and a step name, saves a PNG."""
    from console_helpers import screenshot
    folder = Path(artifacts_dir) / 'console'
    count = [0]

    def shoot(console, step: str) -> Path:
        count[0] += 1
        name = f'{request.node.name}_{count[0]:02d}_{step}.png'
        return screenshot(console, folder / name)
    return shoot
