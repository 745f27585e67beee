"""
The arbiter: who drives which resource (R-SYS-2).

Resources are the resource groups of the RobotModel (a group is one or more chains that must be
driven together). Rules:

- the last requester wins: a request takes the resources from their current owner;
- owners are told synchronously (their callback runs before request() returns) and must stop
  driving what they lost; the aggregator also takes only the owner's reference, so a lost
  resource is never driven by the old owner, even within the same cycle;
- resources given up return to the most recent still-active requester that asked for them;
- whether a controller that lost everything deactivates is the controller's policy
  (``stay_operational``), see :class:`sweetie_motion.controllers.base.ControllerCore`.
"""

import threading
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Protocol, Tuple

from sweetie_motion.errors import SweetieMotionError


class ResourceClient(Protocol):
    """What the arbiter needs of a controller."""

    name: str

    def on_resources_changed(self, owned: FrozenSet[str], lost: FrozenSet[str],
                             gained: FrozenSet[str]) -> None:
        """Take note of the new set of owned resources (called under the arbiter's lock)."""


class UnknownResourceError(SweetieMotionError):
    """A request names resources the arbiter does not manage."""

    def __init__(self, resources: Iterable[str], known: Iterable[str]) -> None:
        self.resources = sorted(resources)
        super().__init__(f'unknown resource(s) {", ".join(self.resources)} '
                         f'(resources are the groups {", ".join(known)})')


class Arbiter:
    """
    Grants resources to controllers; thread-safe.

    :param resources: the resource names (RobotModel groups) in canonical order.
    """

    def __init__(self, resources: Iterable[str]) -> None:
        self._resources: Tuple[str, ...] = tuple(resources)
        self._lock = threading.RLock()
        self._owner: Dict[str, Optional[ResourceClient]] = dict.fromkeys(self._resources)
        # active requesters, most recent last, with what each asked for
        self._requests: List[Tuple[ResourceClient, FrozenSet[str]]] = []
        self._version = 0
        self._listeners: List[Callable[[Dict[str, str]], None]] = []

    @property
    def resources(self) -> Tuple[str, ...]:
        """Return the managed resources in canonical order."""
        return self._resources

    @property
    def version(self) -> int:
        """Return a counter that changes whenever ownership changes."""
        return self._version

    def add_listener(self, listener: Callable[[Dict[str, str]], None]) -> None:
        """Call ``listener(owners)`` after every change of ownership (outside the lock)."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[Dict[str, str]], None]) -> None:
        """Stop calling ``listener``."""
        with self._lock:
            self._listeners = [f for f in self._listeners if f != listener]

    def owners(self) -> Dict[str, str]:
        """Return resource -> owner name ('' when free)."""
        with self._lock:
            return {r: (c.name if c else '') for r, c in self._owner.items()}

    def owned_by(self, client: ResourceClient) -> FrozenSet[str]:
        """Return the resources ``client`` owns now."""
        with self._lock:
            return frozenset(r for r, c in self._owner.items() if c is client)

    def request(self, client: ResourceClient, resources: Iterable[str]) -> FrozenSet[str]:
        """
        Take ``resources`` for ``client`` from whoever owns them.

        The client becomes the most recent requester of them.

        :return: the resources the client owns afterwards.
        :raises UnknownResourceError: a resource is not managed (nothing changes).
        """
        wanted = frozenset(resources)
        unknown = wanted - set(self._resources)
        if unknown:
            raise UnknownResourceError(unknown, self._resources)
        with self._lock:
            before = self._snapshot()
            asked = self._asked(client)
            self._requests = [(c, r) for c, r in self._requests if c is not client]
            self._requests.append((client, wanted | asked))
            for resource in wanted:
                self._owner[resource] = client
            changes = self._notify(before)
            owned = self.owned_by(client)
        self._publish(changes)
        return owned

    def release(self, client: ResourceClient,
                resources: Optional[Iterable[str]] = None) -> FrozenSet[str]:
        """
        Give up ``resources`` (all when None).

        They go back to the most recent still-active requester that asked for them. Releasing
        everything also ends ``client``'s requests, so it will not get resources back later.

        :return: the resources the client still owns.
        """
        with self._lock:
            before = self._snapshot()
            asked = self._asked(client)
            dropped = asked if resources is None else frozenset(resources) & asked
            remaining = asked - dropped
            self._requests = [(c, r) for c, r in self._requests if c is not client]
            if remaining:
                self._requests.append((client, remaining))
            for resource in dropped:
                if self._owner.get(resource) is client:
                    self._owner[resource] = self._fallback(resource)
            changes = self._notify(before)
            owned = self.owned_by(client)
        self._publish(changes)
        return owned

    def forget(self, client: ResourceClient) -> None:
        """Release everything of ``client`` and drop it entirely (a controller going away)."""
        self.release(client, None)

    # --- internals -----------------------------------------------------------------------------

    def _asked(self, client: ResourceClient) -> FrozenSet[str]:
        for requester, asked in self._requests:
            if requester is client:
                return asked
        return frozenset()

    def _fallback(self, resource: str) -> Optional[ResourceClient]:
        for client, asked in reversed(self._requests):
            if resource in asked:
                return client
        return None

    def _snapshot(self) -> Dict[int, Tuple[ResourceClient, FrozenSet[str]]]:
        held: Dict[int, Tuple[ResourceClient, set]] = {}
        for resource, client in self._owner.items():
            if client is not None:
                held.setdefault(id(client), (client, set()))[1].add(resource)
        return {k: (c, frozenset(r)) for k, (c, r) in held.items()}

    def _notify(self, before):
        after = self._snapshot()
        clients = {k: v[0] for k, v in before.items()}
        clients.update({k: v[0] for k, v in after.items()})
        changed = False
        for key, client in clients.items():
            old = before.get(key, (client, frozenset()))[1]
            new = after.get(key, (client, frozenset()))[1]
            if old != new:
                changed = True
                client.on_resources_changed(new, old - new, new - old)
        if changed:
            self._version += 1
            return {r: (c.name if c else '') for r, c in self._owner.items()}
        return None

    def _publish(self, owners: Optional[Dict[str, str]]) -> None:
        if owners is None:
            return
        for listener in list(self._listeners):
            listener(owners)
