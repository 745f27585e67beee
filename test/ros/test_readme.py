"""
The README's examples, run as a reader would: the tour's commands and the Python API example.

The blocks marked ``<!-- tested: test/ros/test_readme.py ... -->`` are run against the motion
process of the README's ``sweetie-motion bringup`` (the default config and namespace), in a
ROS domain of their own and with a storage folder of the test's.
"""

import os
from pathlib import Path
import re
import shlex
import subprocess
import sys
from typing import List

from motion_process import motion_process, MotionClient
import pytest
from ros_util import ROOT

pytestmark = [pytest.mark.ros, pytest.mark.slow]

README = Path(ROOT) / 'README.md'
MARK = '<!-- tested: test/ros/test_readme.py'
BLOCK = re.compile(r'^```(\w+)\n(.*?)^```', re.S | re.M)


def readme_blocks(language: str) -> List[str]:
    """Return the code blocks of ``language`` right after a tested marker."""
    text = README.read_text()
    blocks = []
    for start in [m.end() for m in re.finditer(re.escape(MARK), text)]:
        found = BLOCK.search(text, start)
        if found is not None and found.group(1) == language and \
                text[start:found.start()].count('\n') <= 1:
            blocks.append(found.group(2))
    return blocks


def test_the_readme_marks_the_tour_and_the_python_example():
    assert len(readme_blocks('bash')) == 1 and len(readme_blocks('python')) == 1
    # every Python block of the README is a tested one
    assert len(BLOCK.findall(README.read_text())) >= 2
    assert [b for lang, b in BLOCK.findall(README.read_text()) if lang == 'python'] == \
        readme_blocks('python')


def _run(argv: List[str], timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=dict(os.environ))


def test_the_tour_and_the_python_example_run_as_written(tmp_path, domain_id):
    # the README's `sweetie-motion bringup`, with the test's storage folder
    with motion_process('sweetie_bot_motion.yaml', 'sweetie_bot', '--storage-dir',
                        str(tmp_path / 'store')):
        with MotionClient('sweetie_bot', domain_id) as peer:
            peer.wait_ready(['motion', 'trajectory_storage', 'joint_trajectory'], 60.0)
        outputs = {}
        for line in readme_blocks('bash')[0].strip().splitlines():
            words = shlex.split(line)
            assert words[0] == 'sweetie-motion', line
            done = _run([sys.executable, '-m', 'sweetie_motion.cli', *words[1:]])
            assert done.returncode == 0, f'{line}:\n{done.stdout}\n{done.stderr}'
            outputs[line] = done.stdout + done.stderr
        assert 'sweetie_bot' in outputs['sweetie-motion describe']
        assert 'greeting' in outputs['sweetie-motion list']
        assert 'name: nod' in outputs['sweetie-motion show nod']
        assert 'succeeded' in outputs['sweetie-motion play nod'].lower()

        for block in readme_blocks('python'):
            done = _run([sys.executable, '-c', block])
            assert done.returncode == 0, f'{block}\n{done.stdout}\n{done.stderr}'
            assert 'True 0' in done.stdout and "'nod'" in done.stdout, done.stdout


def test_the_readme_says_nothing_is_unexercised_that_is():
    text = ' '.join(README.read_text().split())
    assert 'not exercised' not in text
    assert 'This path is exercised' in text


def test_import_of_a_file_it_cannot_read_is_bad_input_as_the_readme_says(tmp_path):
    text = ' '.join(README.read_text().split())
    assert 'a file it cannot read (missing, not JSON or YAML) is bad input, as everywhere: one ' \
        'line per file' in text
    bad = tmp_path / 'x.json'
    bad.write_text('{\n  "points": [\n    ,')
    done = _run([sys.executable, '-m', 'sweetie_motion.cli', 'import', str(bad),
                 str(tmp_path / 'gone.json'), '--dir', str(tmp_path / 'out')])
    assert done.returncode == 2 and not done.stdout, done
    assert done.stderr.splitlines() == [
        f'sweetie-motion import: {bad}:3:5: not JSON: Expecting value',
        f'sweetie-motion import: {tmp_path / "gone.json"}: no such file'], done.stderr
