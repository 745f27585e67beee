"""Declare a node's parameter table with descriptors; validate at configure and on set."""

from typing import Any, Collection, Dict, Optional, Sequence

from rcl_interfaces.msg import (
    FloatingPointRange, ParameterDescriptor, ParameterType, SetParametersResult,
)
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from sweetie_motion.nodes.rclpy_private import set_empty_array
from sweetie_motion.parameters import ParameterError, ParameterSpec

_ARRAY_TYPES = {str: ParameterType.PARAMETER_STRING_ARRAY,
                float: ParameterType.PARAMETER_DOUBLE_ARRAY,
                int: ParameterType.PARAMETER_INTEGER_ARRAY,
                bool: ParameterType.PARAMETER_BOOL_ARRAY}
_SCALAR_TYPES = {str: ParameterType.PARAMETER_STRING, float: ParameterType.PARAMETER_DOUBLE,
                 int: ParameterType.PARAMETER_INTEGER, bool: ParameterType.PARAMETER_BOOL}


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """Return the ROS descriptor of a parameter spec (type, description, range, read-only)."""
    kind = spec.kind
    ptype = _ARRAY_TYPES[spec.element] if kind is list else _SCALAR_TYPES[kind]
    text = spec.description
    if spec.choices:
        text += f' One of: {", ".join(spec.choices)}.'
    if not spec.dynamic and not spec.read_only:
        text += ' Applied at configure.'
    desc = ParameterDescriptor(name=spec.name, type=ptype, description=text,
                               read_only=spec.read_only)
    if kind is float and (spec.low is not None or spec.high is not None):
        desc.floating_point_range = [FloatingPointRange(
            from_value=spec.low if spec.low is not None else -1e300,
            to_value=spec.high if spec.high is not None else 1e300, step=0.0)]
    return desc


def declare_table(node: Node, specs: Sequence[ParameterSpec],
                  empty: Collection[str] = ()) -> None:
    """
    Declare every parameter of ``specs`` (values given as overrides win over defaults).

    :param empty: names of list parameters given as an empty list (rclpy cannot take [] as an
        override: it has no type); they are declared empty, read-only ones included.
    """
    for spec in specs:
        if node.has_parameter(spec.name):
            continue
        default = spec.default
        if spec.kind is list and (not default or spec.name in empty):
            # rclpy cannot infer the type of an empty list: declare the type, give it []
            node.declare_parameter(spec.name, empty_array_type(spec), descriptor(spec))
            try:
                node.get_parameter(spec.name).value   # an override gave it a value
            except ParameterUninitializedException:
                set_empty_array(node, spec.name, empty_array_type(spec))
        else:
            node.declare_parameter(spec.name, default, descriptor(spec))
    table = {spec.name: spec for spec in specs}

    def on_set(parameters) -> SetParametersResult:
        for parameter in parameters:
            spec = table.get(parameter.name)
            if spec is None:
                continue
            try:
                spec.validate(parameter.value)
            except ParameterError as error:
                return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set)
    # `ros2 param set` types a value by its YAML alone: [] is an empty bool array, 2 an
    # integer; rclpy would refuse both for a string-array or a double parameter before any
    # check of ours: they are given the parameter's type first
    node.add_pre_set_parameters_callback(
        lambda parameters: [as_declared(table.get(p.name), p) for p in parameters])


def as_declared(spec: Optional[ParameterSpec], parameter: Parameter) -> Parameter:
    """
    Return ``parameter`` with the type of its spec where the value means the same.

    An empty array of any type (and ``['']``) is the parameter's empty array, an integer
    array a double array, an integer a double; anything else is left for the checks.
    """
    if spec is None:
        return parameter
    value, kind = parameter.value, parameter.type_
    if spec.kind is list and isinstance(value, (list, tuple)):
        if not value or list(value) == ['']:
            return Parameter(parameter.name, empty_array_type(spec), [])
        if spec.element is float and kind == Parameter.Type.INTEGER_ARRAY:
            return Parameter(parameter.name, Parameter.Type.DOUBLE_ARRAY,
                             [float(v) for v in value])
    if spec.kind is float and kind == Parameter.Type.INTEGER:
        return Parameter(parameter.name, Parameter.Type.DOUBLE, float(value))
    return parameter


def empty_array_type(spec: ParameterSpec) -> Parameter.Type:
    """Return the rclpy type of an array parameter (rclpy cannot infer it from [])."""
    return {str: Parameter.Type.STRING_ARRAY, float: Parameter.Type.DOUBLE_ARRAY,
            int: Parameter.Type.INTEGER_ARRAY, bool: Parameter.Type.BOOL_ARRAY}[spec.element]


def read_table(node: Node, specs: Sequence[ParameterSpec]) -> Dict[str, Any]:
    """
    Return the validated values of the table.

    :raises ParameterError: naming every invalid parameter.
    """
    values, problems = {}, []
    for spec in specs:
        try:
            value = node.get_parameter(spec.name).value
        except ParameterUninitializedException:
            value = None
        if value is None and spec.kind is list:
            value = []
        try:
            values[spec.name] = spec.validate(value)
        except ParameterError as error:
            problems.append(str(error))
    if problems:
        raise ParameterError('; '.join(problems))
    return values


def parameters_under(node: Node, prefix: str) -> Dict[str, Any]:
    """Return name -> value of every declared parameter whose name starts with ``prefix.``."""
    return {f'{prefix}.{name}': parameter.value
            for name, parameter in node.get_parameters_by_prefix(prefix).items()}
