"""
The exception family of sweetie_motion.

Every error the package raises on purpose derives from :class:`SweetieMotionError` and carries
the facts a caller needs (the unknown joints, the chain, the link) as attributes, so that ROS
adapters can map each one to a result code and an error string in one place.
"""

from typing import Iterable, Optional, Sequence


class SweetieMotionError(Exception):
    """Base class of all errors raised by sweetie_motion."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return " (did you mean 'X'?)" for the closest of ``choices``, or '' if none is close."""
    import difflib
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f' (did you mean {close[0]!r}?)' if close else ''


class ConfigError(SweetieMotionError):
    """A configuration (a process config, a component's type) is invalid."""


# --- robot model -------------------------------------------------------------------------------


class ModelError(SweetieMotionError):
    """A problem with the robot description or its use."""


class UrdfError(ModelError):
    """The URDF cannot be read or parsed."""


class UnknownLinkError(ModelError):
    """A chain declaration names a link that the URDF does not have."""

    def __init__(self, chain: str, link: str, role: str) -> None:
        self.chain = chain
        self.link = link
        self.role = role
        super().__init__(f'chain {chain!r}: {role} {link!r} is not a link of the URDF')


class ChainDeclarationError(ModelError):
    """A chain or group declaration is inconsistent (missing keys, not a path, ...)."""


class ChainOverlapError(ModelError):
    """Two chains share joints but belong to different resource groups."""

    def __init__(self, first: str, second: str, joints: Sequence[str]) -> None:
        self.chains = (first, second)
        self.joints = list(joints)
        super().__init__(
            f'chains {first!r} and {second!r} share joints {", ".join(joints)} but are in '
            'different groups: chains that overlap must be in the same resource group')


class NotConfiguredError(ModelError):
    """The robot model is used before configure() finished or after cleanup()."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        super().__init__(f'RobotModel.{operation}() called before configure() succeeded')


class UnknownChainError(ModelError):
    """A chain name is not declared in the robot model."""

    def __init__(self, chain: str, known: Iterable[str] = ()) -> None:
        self.chain = chain
        known = list(known)
        hint = f'{did_you_mean(chain, known)} (known chains: {", ".join(known)})' if known else ''
        super().__init__(f'unknown chain {chain!r}{hint}')


class UnknownGroupError(ModelError):
    """A resource group name is not declared in the robot model."""

    def __init__(self, group: str, known: Iterable[str] = ()) -> None:
        self.group = group
        known = list(known)
        hint = f'{did_you_mean(group, known)} (known groups: {", ".join(known)})' if known else ''
        super().__init__(f'unknown resource group {group!r}{hint}')


class UnknownJointError(ModelError):
    """One or more joint names are not joints of the robot model."""

    def __init__(self, joints: Sequence[str], context: Optional[str] = None,
                 known: Iterable[str] = ()) -> None:
        self.joints = list(joints)
        where = f'{context}: ' if context else ''
        known = list(known)
        hint = did_you_mean(self.joints[0], known) if known and self.joints else ''
        super().__init__(f'{where}unknown joint(s): {", ".join(self.joints)}{hint}')


class MissingJointError(ModelError):
    """A joint state lacks joints that the operation needs."""

    def __init__(self, joints: Sequence[str], context: Optional[str] = None) -> None:
        self.joints = list(joints)
        where = f'{context}: ' if context else ''
        super().__init__(f'{where}joint state lacks joint(s): {", ".join(self.joints)}')
