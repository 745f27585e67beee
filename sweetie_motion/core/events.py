"""
What the cycle side tells the ROS side without being asked: one dataclass per kind of event.

The cycle host and its components send them (in the cycle process they cross the pipe as
pickles); a :class:`~sweetie_motion.host.client.HostClient` hands each to its listeners in a
thread of its own, and a listener picks the kinds it handles with ``isinstance``. An event of
one controller (:class:`ControllerEvent`: a goal's progress and end, losing every resource)
is addressed to it and goes to that controller's listeners alone. A goal's
:class:`Outcome` and :class:`Feedback` live here too: they travel inside the goal events.
Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Union

import numpy as np


@dataclass
class Outcome:
    """How a goal ended: 'succeeded', 'aborted' or 'canceled', with code and message."""

    status: str
    code: int
    message: str


@dataclass
class Feedback:
    """One feedback sample of a running goal (arrays in the goal's joint order)."""

    time_from_start: float
    desired_position: np.ndarray
    desired_velocity: np.ndarray
    desired_acceleration: np.ndarray
    actual_position: np.ndarray
    actual_velocity: np.ndarray


@dataclass(frozen=True)
class OwnersChanged:
    """The arbiter gave resources to other owners: resource -> owner name ('' when free)."""

    owners: Dict[str, str]


@dataclass(frozen=True)
class ControllerEvent:
    """An event of one controller, addressed to it: only its node's listener receives it."""

    #: the name of the controller (its component) the event is for
    controller: str


@dataclass(frozen=True)
class NotOperational(ControllerEvent):
    """A controller lost every resource to others (its node deactivates)."""


@dataclass(frozen=True)
class StageFailed:
    """A cycle stage raised (reported the first three times and every thousandth)."""

    stage: str
    count: int
    text: str


@dataclass(frozen=True)
class SafetyLimited:
    """The safety stage changed a reference (what and why)."""

    text: str


@dataclass(frozen=True)
class CallFailed:
    """A call made without waiting for its answer failed on the cycle side."""

    target: str
    #: what failed: the command's name (``SetTargets``)
    command: str
    text: str


@dataclass(frozen=True)
class ServoCommandDone:
    """
    A servo operation started by the serial bus component's ``command`` ended.

    :param ident: the id ``command`` returned; :param ok: it succeeded; :param message: what
        happened; :param joints: the joints (or scan entries) concerned; :param values: the
        registers read or written, one per joint.
    """

    ident: int
    ok: bool
    message: str
    joints: List[str]
    values: List[int]


@dataclass(frozen=True)
class GoalProgress(ControllerEvent):
    """
    A running trajectory goal's newest feedback, at most at the controller's feedback rate.

    :param controller: the controller's name; :param goal_id: the id the node started it
        with; :param feedback: the sample; :param support: the support state of the goal's
        time (None: the goal carries none).
    """

    goal_id: bytes
    feedback: Feedback
    support: Optional[Dict[str, float]]


@dataclass(frozen=True)
class GoalEnded(ControllerEvent):
    """A trajectory goal ended: how (its outcome is final)."""

    goal_id: bytes
    outcome: Outcome


@dataclass(frozen=True)
class HostExited:
    """The cycle process ended by itself (the robot is not driven any more)."""

    code: Optional[int]


#: every event of the cycle side
CycleEvent = Union[OwnersChanged, NotOperational, StageFailed, SafetyLimited, CallFailed,
                   ServoCommandDone, GoalProgress, GoalEnded, HostExited]

#: sends an event to the ROS side; must not block (the cycle thread sends some)
SendEvent = Callable[[CycleEvent], None]
