"""The motion programs shown in the documentation parse and plan on the arm (R-CART-3)."""

import os
import re

import pytest
from sweetie_motion.cartesian.program import COMMANDS, parse_program
from sweetie_motion.cartesian.runner import OfflineBackend, program_steps, ProgramRunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCUMENTS = ['README.md', os.path.join('docs', 'cartesian.md')]


def fenced_blocks(text):
    """Return the code blocks of a Markdown text that have no language tag."""
    blocks, current, tag = [], None, ''
    for line in text.splitlines():
        fence = re.match(r'^\s*```(\S*)', line)
        if fence and current is None:
            current, tag = [], fence.group(1)
        elif fence:
            if not tag:
                blocks.append('\n'.join(current) + '\n')
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def programs():
    found = []
    for document in DOCUMENTS:
        with open(os.path.join(ROOT, document), encoding='utf-8') as stream:
            text = stream.read()
        for block in fenced_blocks(text):
            words = [line.split()[0].upper() for line in block.splitlines()
                     if line.strip() and not line.lstrip().startswith(';')]
            if words and all(word in COMMANDS for word in words):
                found.append(pytest.param(block, id=f'{document}:{len(found) + 1}'))
    return found


@pytest.mark.parametrize('text', programs())
def test_a_documented_program_plans_within_the_limits(text, arm):
    home = arm.get_chain_property('arm', 'home')
    backend = OfflineBackend(arm, 'arm', home)
    runner = ProgramRunner(program_steps(parse_program(text)), backend,
                           arm.list_joints('arm'), home)
    reports = runner.run()
    assert runner.finished and reports
    assert backend.record.times[-1] > 0


def test_the_documentation_shows_at_least_one_program():
    assert programs()
