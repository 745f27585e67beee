"""
What every controller of the motion process shares: resources, output, the cycle stage.

A controller drives chains. It asks the arbiter for the resource groups of its chains, is told
synchronously when it loses or regains them, and each tick writes a :class:`ControllerOutput`
for the resources it owns. A controller that loses every resource is no longer operational and
its node deactivates it — unless it is ``stay_operational``: then it keeps running with what it
has and gets resources back when others release them.

A controller core is also its node's component on the cycle side (:class:`~sweetie_motion.core.
component.Component`): it says what it is made from and joins and leaves the cycle itself.
"""

from dataclasses import dataclass
import threading
from typing import Callable, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.component import Component, ComponentCommand, CycleResources
from sweetie_motion.core.cycle import StageRole, Tick
from sweetie_motion.core.events import NotOperational, SendEvent
from sweetie_motion.core.ports import ControllerOutput
from sweetie_motion.errors import UnknownChainError
from sweetie_motion.model.robot_model import RobotModelView


@dataclass(frozen=True, eq=False)
class ControlledJoints:
    """
    What a controller of some chains drives, in the model's terms (pure data).

    :param chains: the chains (or chainless group names), duplicates removed.
    :param resources: the resource groups of those chains.
    :param indices: canonical indices of every joint of those resources, sorted.
    :param joints: the names of those joints, in the same order.
    """

    chains: Tuple[str, ...]
    resources: FrozenSet[str]
    indices: np.ndarray
    joints: Tuple[str, ...]

    @classmethod
    def of(cls, model: RobotModelView, chains: Sequence[str]) -> 'ControlledJoints':
        """
        Resolve ``chains`` against the model.

        :raises UnknownChainError: a name is neither a chain nor a group.
        """
        known, groups = model.list_chains(), model.list_groups()
        for chain in chains:
            if chain not in known and chain not in groups:
                raise UnknownChainError(chain, known + [g for g in groups if g not in known])
        unique = tuple(dict.fromkeys(chains))
        resources = frozenset(model.get_chain_group(c) if c in known else c for c in unique)
        indices = sorted({int(i) for r in resources for i in model.get_group_indices(r)})
        names = model.list_all_joints()
        return cls(unique, resources, np.array(indices, dtype=np.intp),
                   tuple(names[i] for i in indices))

    def local(self, indices: Iterable[int]) -> np.ndarray:
        """Return the positions in this controller's vectors of canonical ``indices``."""
        position = {int(c): k for k, c in enumerate(self.indices)}
        return np.array([position[int(i)] for i in indices], dtype=np.intp)


class ControllerCore(Component):
    """
    Base of controller cores: arbiter client and cycle stage (role StageRole.CONTROLLER).

    As a component, :attr:`order` places it among the controllers of a tick (lower first).

    :param name: controller name (the owner name the arbiter shows).
    :param model: the robot model view.
    :param arbiter: the process's arbiter.
    :param chains: the chains this controller may drive; a resource group's name is accepted
        too (for groups of joints without a chain, like the eyes).
    :param stay_operational: keep running when all resources are lost.
    """

    #: place among the controllers of a tick (lower first)
    order = 0

    def __init__(self, name: str, model: RobotModelView, arbiter: Arbiter,
                 chains: Sequence[str], stay_operational: bool = False) -> None:
        controlled = ControlledJoints.of(model, chains)
        self.name = name
        self.model = model
        self.arbiter = arbiter
        self.controlled = controlled
        self.chains: List[str] = list(controlled.chains)
        self.stay_operational = stay_operational
        self.resources: FrozenSet[str] = controlled.resources
        #: canonical indices of every joint this controller may drive
        self.indices = controlled.indices
        self.joints = list(controlled.joints)
        #: canonical index -> position in this controller's joint vectors
        self.local_index = {int(c): k for k, c in enumerate(self.indices)}
        self._lock = threading.Lock()
        self._owned: FrozenSet[str] = frozenset()
        self._gained: FrozenSet[str] = frozenset()
        self.operational = False
        #: called (from the arbiter's caller thread) when the controller lost everything and
        #: must be deactivated; the node adapter schedules the lifecycle transition
        self.on_not_operational: Optional[Callable[[], None]] = None
        self.on_ownership: Optional[Callable[[FrozenSet[str], FrozenSet[str]], None]] = None

    # --- in the cycle (the component) ----------------------------------------------------------

    def attach(self, shared: CycleResources, name: str, send_event: SendEvent) -> None:
        """Take the shared objects; losing every resource is told as NotOperational."""
        super().attach(shared, name, send_event)
        self.on_not_operational = lambda: send_event(NotOperational(name))

    def activate(self) -> None:
        """Join the cycle and take the resources."""
        self.shared.cycle.add_stage(StageRole.CONTROLLER, self, self.order)
        self.acquire()

    def deactivate(self) -> None:
        """Leave the cycle and give every resource back."""
        self.shared.cycle.remove_stage(self)
        self.release()

    def destroy(self) -> None:
        """Forget the controller in the arbiter."""
        self.arbiter.forget(self)

    # --- arbiter client ------------------------------------------------------------------------

    @property
    def owned(self) -> FrozenSet[str]:
        """Return the resources this controller owns now."""
        return self._owned

    def owned_indices(self, resources: Optional[Iterable[str]] = None) -> np.ndarray:
        """Return the canonical indices of the joints of ``resources`` (default: owned)."""
        resources = self._owned if resources is None else resources
        parts = [self.model.get_group_indices(r) for r in resources]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.intp)

    def on_resources_changed(self, owned: FrozenSet[str], lost: FrozenSet[str],
                             gained: FrozenSet[str]) -> None:
        """Arbiter callback: record the new ownership; lost resources stop being driven."""
        with self._lock:
            self._owned = owned
            self._gained = (self._gained | gained) - lost
        if self.on_ownership is not None:
            self.on_ownership(lost, gained)
        if not owned and lost and self.operational and not self.stay_operational:
            self.operational = False
            if self.on_not_operational is not None:
                self.on_not_operational()

    def take_gained(self) -> FrozenSet[str]:
        """Return and clear the resources gained since the last call (the cycle resets them)."""
        if not self._gained:  # every tick but a handover: no lock needed to see nothing
            return frozenset()
        with self._lock:
            gained, self._gained = self._gained, frozenset()
            return gained

    def adopt_gained(self, tick: Tick, smoothing) -> Optional[np.ndarray]:
        """
        Continue from the current reference on the joints of resources just gained.

        Resets those joints of the ``smoothing`` filter to the tick's reference (position and
        velocity), so taking a resource over never makes it jump.

        :return: the local indices of the gained joints (the caller retargets them), or None.
        """
        gained = self.take_gained()
        if not gained:
            return None
        local = np.array([self.local_index[int(i)] for i in self.owned_indices(gained)],
                         dtype=np.intp)
        position, velocity = smoothing.state
        position[local] = tick.reference.position[self.indices[local]]
        velocity[local] = tick.reference.velocity[self.indices[local]]
        smoothing.reset(position, velocity)
        return local

    def acquire(self, resources: Optional[Iterable[str]] = None) -> FrozenSet[str]:
        """Request resources (default: all of this controller's); return what it owns."""
        wanted = self.resources if resources is None else frozenset(resources)
        self.operational = True
        return self.arbiter.request(self, wanted)

    def release(self) -> None:
        """Give every resource back and stop asking for them."""
        self.operational = False
        self.arbiter.release(self, None)
        with self._lock:
            self._gained = frozenset()

    # --- cycle stage ---------------------------------------------------------------------------

    def update(self, tick: Tick) -> None:
        """Compute this tick's output (subclasses); publish it with :meth:`emit`."""
        raise NotImplementedError

    def emit(self, tick: Tick, position: np.ndarray, velocity: np.ndarray) -> None:
        """Hand this tick's full-pose reference to the aggregator, for the owned resources."""
        tick.outputs[self.name] = ControllerOutput(position, velocity, self._owned)


@dataclass(frozen=True)
class Acquire(ComponentCommand[ControllerCore, FrozenSet[str]]):
    """Take the controller's resources now (:meth:`ControllerCore.acquire`)."""

    KIND = ControllerCore

    def run(self, component: ControllerCore) -> FrozenSet[str]:
        """Call :meth:`ControllerCore.acquire` for all of the controller's resources."""
        return component.acquire()
