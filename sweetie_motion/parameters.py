"""
Declarative parameter tables (pure: no rclpy).

Each node describes its parameters once: name, default, description, whether it can change at
run time, range or choices, and a validator. The ROS adapter (:mod:`sweetie_motion.nodes.params`)
declares them with descriptors and validates values at configure and on every set; the
validators here are tested without ROS.
"""

from dataclasses import dataclass
import math
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from sweetie_motion.errors import SweetieMotionError


class ParameterError(SweetieMotionError):
    """A parameter value is invalid; the message names the parameter and the rule."""


@dataclass(frozen=True)
class ParameterSpec:
    """
    One parameter of a node.

    :param name: parameter name (dots allowed: 'smoothing.type').
    :param default: default value; its type is the parameter's type (a list of str/float/bool
        for arrays: use an empty list with ``array_of``).
    :param description: what it means, with units.
    :param read_only: cannot change after the node is created.
    :param dynamic: may change while the node is active (otherwise only applied at configure).
    :param low: lowest allowed value (numbers).
    :param high: highest allowed value (numbers).
    :param choices: allowed values (strings).
    :param check: extra validator returning an error message or None.
    :param array_of: element type of an array parameter with an empty default.
    """

    name: str
    default: Any
    description: str
    read_only: bool = False
    dynamic: bool = False
    low: Optional[float] = None
    high: Optional[float] = None
    choices: Optional[Tuple[str, ...]] = None
    check: Optional[Callable[[Any], Optional[str]]] = None
    array_of: Optional[type] = None

    @property
    def kind(self) -> type:
        """Return the Python type of the value (list for arrays)."""
        if isinstance(self.default, bool):
            return bool
        if isinstance(self.default, (list, tuple)):
            return list
        return type(self.default)

    @property
    def element(self) -> Optional[type]:
        """Return the element type of an array parameter."""
        if self.kind is not list:
            return None
        if self.array_of is not None:
            return self.array_of
        return type(self.default[0]) if self.default else str

    def validate(self, value: Any) -> Any:
        """
        Return the value converted to the parameter's type.

        :raises ParameterError: wrong type, out of range, not a choice, or the check fails.
        """
        kind = self.kind
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is list:
            if not isinstance(value, (list, tuple)):
                raise ParameterError(f'{self.name}: expected a list, got {value!r}')
            element = self.element
            assert element is not None  # an array parameter always has an element type
            converted = []
            for item in value:
                if element is float and isinstance(item, int) and not isinstance(item, bool):
                    item = float(item)
                if not isinstance(item, element):
                    raise ParameterError(
                        f'{self.name}: expected a list of {element.__name__}, got {item!r}')
                converted.append(item)
            value = converted
        elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise ParameterError(
                f'{self.name}: expected {kind.__name__}, got {type(value).__name__} {value!r}')
        broken = out_of_range(value, self.low, self.high) if kind in (int, float) else ''
        if broken == 'finite':
            raise ParameterError(f'{self.name}: must be finite, got {value}')
        if broken == 'low':
            raise ParameterError(f'{self.name}: must be >= {self.low}, got {value}')
        if broken == 'high':
            raise ParameterError(f'{self.name}: must be <= {self.high}, got {value}')
        if self.choices is not None and value not in self.choices:
            raise ParameterError(
                f'{self.name}: must be one of {", ".join(self.choices)}, got {value!r}')
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ParameterError(f'{self.name}: {problem}')
        return value


def out_of_range(value: float, low: Optional[float] = None,
                 high: Optional[float] = None) -> str:
    """
    Return the rule a number breaks against the range [low, high]; '' when it keeps them.

    The one range check of parameters and configuration files alike; each says the broken rule
    in its own words, naming the parameter or key.

    :param low: the lowest allowed value (None: no lower bound).
    :param high: the highest allowed value (None: no upper bound).
    :return: 'finite' (NaN or infinite), 'low' (below ``low``), 'high' (above ``high``) or ''.
    """
    if isinstance(value, float) and not math.isfinite(value):  # an int is finite, if huge
        return 'finite'
    if low is not None and value < low:
        return 'low'
    if high is not None and value > high:
        return 'high'
    return ''


def validate_all(specs: Sequence[ParameterSpec], values: Mapping[str, Any]) -> Dict[str, Any]:
    """
    Validate every parameter of a table.

    :param values: name -> value; missing names take the default.
    :return: name -> validated value.
    :raises ParameterError: listing every invalid parameter.
    """
    result, problems = {}, []
    for spec in specs:
        try:
            result[spec.name] = spec.validate(values.get(spec.name, spec.default))
        except ParameterError as error:
            problems.append(str(error))
    if problems:
        raise ParameterError('; '.join(problems))
    return result


def non_empty(value: Iterable) -> Optional[str]:
    """Check that the list is not empty (a validator)."""
    return None if list(value) else 'must not be empty'


def unique(value: Sequence) -> Optional[str]:
    """Check that the list has no duplicates (a validator)."""
    seen, duplicates = set(), []
    for item in value:
        if item in seen:
            duplicates.append(item)
        seen.add(item)
    return f'duplicate entries {", ".join(map(str, duplicates))}' if duplicates else None


def one_of(known: Iterable[str], what: str) -> Callable[[Sequence[str]], Optional[str]]:
    """Return a validator that checks that every item is in ``known``."""
    known = list(known)

    def check(value: Sequence[str]) -> Optional[str]:
        unknown = [v for v in value if v not in known]
        if unknown:
            return f'unknown {what} {", ".join(unknown)} (known: {", ".join(known)})'
        return None
    return check


def nested_overrides(values: Mapping[str, Any], prefix: str
                     ) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], List[str]]:
    """
    Split ``prefix.<param>`` and ``prefix.<joint>.<param>`` entries of a flat mapping.

    :return: (params, per-joint overrides, other names under the prefix that fit neither).
    """
    params: Dict[str, Any] = {}
    overrides: Dict[str, Dict[str, Any]] = {}
    odd: List[str] = []
    for name, value in values.items():
        if not name.startswith(prefix + '.'):
            continue
        parts = name[len(prefix) + 1:].split('.')
        if len(parts) == 1:
            params[parts[0]] = value
        elif len(parts) == 2:
            overrides.setdefault(parts[0], {})[parts[1]] = value
        else:
            odd.append(name)
    return params, overrides, odd
