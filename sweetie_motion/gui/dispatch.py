"""
Who handles which event: handlers registered by the event's type, explicitly.

The editor's and the console's presenters take the bridges' events, and the bridges the
presenters' requests, through one of these: a reader (or go-to-definition) finds the handler
of an event where it is registered, instead of in a method name built from a string.
No Qt, no rclpy.
"""

from typing import Any, Callable, Dict, Type, TypeVar

E = TypeVar('E')


class EventHandlers:
    """
    A table from event types to their handlers.

    :param owner: who handles them, for the error of an event nobody handles.
    """

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._by_type: Dict[type, Callable[[Any], None]] = {}

    def register(self, kind: Type[E], handler: Callable[[E], None]) -> None:
        """Have ``handler`` take the events of type ``kind`` (one handler per type)."""
        if kind in self._by_type:
            raise ValueError(f'{self.owner} has a handler of {kind.__name__} already')
        self._by_type[kind] = handler

    def dispatch(self, event: object) -> None:
        """
        Hand ``event`` to the handler of its type.

        :raises TypeError: no handler is registered for its type.
        """
        handler = self._by_type.get(type(event))
        if handler is None:
            raise TypeError(f'{self.owner} does not handle {type(event).__name__}')
        handler(event)
