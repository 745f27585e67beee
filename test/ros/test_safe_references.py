"""
Safe references from outside (R-SYS-8): every start, stop and switch within the joint limits.

`bench/safety.py --json` starts the bringup as a user does (virtual robot, torque switch,
FollowJointState, a whole-body and a head trajectory controller), causes each event from its
own process through the ROS interfaces — a far first point, an abort on path tolerance, a
cancel at speed, a preemption, a FollowJointState step, a handover to a streaming
FollowJointState, a takeover between controllers, torque on while a hand moves a leg — and
records ``joint_states_ref`` over DDS. Here the recording is checked: no position step above
v_max * dt, no velocity change above a_max * dt, no NaN, and stops that neither overshoot nor
reverse.
"""

import json
import os
import subprocess
import sys

import pytest
from ros_util import ROOT

pytestmark = [pytest.mark.ros, pytest.mark.slow]

EVENTS = ['far start', 'abort on path tolerance', 'cancel', 'preempt',
          'FollowJointState step', 'handover to a streaming FollowJointState',
          'takeover between controllers', 'torque on while moved by hand']
#: allowance for the nominal time step of the recorded stamps and float rounding
RELATIVE = 1.02


@pytest.fixture(scope='module')
def recorded():
    from domains import own_domain
    with own_domain():
        done = subprocess.run([sys.executable, os.path.join(ROOT, 'bench', 'safety.py'),
                               '--json'], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env=dict(os.environ))
    lines = [line for line in done.stdout.splitlines() if line.startswith('{')]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(lines[-1])
    assert 'Traceback' not in report['log'], report['log']
    return {event['event']: event for event in report['events']}


def test_every_event_happened(recorded):
    assert sorted(recorded) == sorted(EVENTS)
    for event in recorded.values():
        assert event['samples'] > 20, event


@pytest.mark.parametrize('name', EVENTS)
def test_the_reference_stays_within_the_limits(recorded, name):
    event = recorded[name]
    assert event['finite'], 'NaN or inf in joint_states_ref'
    v_limit, a_limit = event['v_limit'], event['a_limit']
    assert event['v_peak'] <= v_limit * RELATIVE, event          # position steps
    assert event['v_stated_peak'] <= v_limit * 1.001, event      # the velocity field
    assert event['a_peak'] <= a_limit * RELATIVE + 0.5, event    # from positions
    assert event['a_stated_peak'] <= a_limit * RELATIVE, event   # velocity changes


@pytest.mark.parametrize('name', ['abort on path tolerance', 'cancel',
                                  'torque on while moved by hand'])
def test_stops_neither_overshoot_nor_reverse(recorded, name):
    event = recorded[name]
    assert event['reversal'] < 1e-6, event
    assert event['overshoot'] < 1e-6, event
    assert event['rest_velocity'] < 1e-6, event


def test_a_far_first_point_is_approached_as_fast_as_the_limits_allow(recorded):
    event = recorded['far start']
    assert event['note'].startswith('0:'), event['note']           # SUCCESSFUL, no abort
    assert 'the approach to the first point takes' in event['note']
    assert event['v_peak'] > 0.8 * event['v_limit']                 # fast, not timid
