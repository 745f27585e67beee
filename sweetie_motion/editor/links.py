"""
What a person is told about the link to the motion process: not found, gone, back.

The lights show each part; these messages say what it means and what to do, once per change.
No rclpy, no Qt.
"""

from dataclasses import dataclass
from typing import Mapping, Optional

#: how long after the start a missing motion process is reported [s] (discovery takes 1-2 s)
STARTUP_GRACE = 4.0


@dataclass(frozen=True)
class LinkNews:
    """A message about the motion process: its text, 'info' or 'error', and whether it is back."""

    text: str
    level: str
    back: bool = False


class LinkWatch:
    """
    Turns the parts' link states into the few messages a person needs.

    :param started: when the window started [s, the presenter's clock].
    :param what: what waits for the motion process, for the messages (e.g. 'Execute, Save and
        Load').
    """

    def __init__(self, started: float, what: str) -> None:
        self.started = float(started)
        self.what = what
        self._ever_up = False
        self._up = False
        self._hinted = False

    def update(self, links: Mapping[str, bool]) -> Optional[LinkNews]:
        """Take the parts' states; return the news, if this change is any."""
        up = any(links.values())
        was, self._up = self._up, up
        if up and not was:
            first, self._ever_up = not self._ever_up, True
            if first and not self._hinted:
                return None  # found at the start, as expected: the lights say it
            return LinkNews('the motion process is connected' +
                            (' again' if not first else ''), 'info', back=True)
        if was and not up:
            return LinkNews(f'the motion process is gone (no joint_states: it died or was '
                            f'stopped); {self.what} wait for it, and the window reconnects '
                            'when it is back', 'error')
        return None

    def tick(self, now: float) -> Optional[LinkNews]:
        """Return the hint to start a motion process, once, if none was found in time."""
        if self._ever_up or self._hinted or now - self.started < STARTUP_GRACE:
            return None
        self._hinted = True
        return LinkNews('no motion process answers: start one with `sweetie-motion bringup` '
                        '(same ROS_DOMAIN_ID and --namespace); the window connects when it is '
                        'up', 'error')
