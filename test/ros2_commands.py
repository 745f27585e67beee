"""
The `ros2 ...` commands of the README and docs/, found and run as the ros2 CLI runs them.

ros2cli is not installed here (no wheel of it exists), so this module does what its verbs do
with the same parsing: a message, request or goal is read with PyYAML's ``safe_load`` and
filled in field by field as ``rosidl_runtime_py.set_message_fields`` fills it (the attribute
named by each key, sequences of messages element by element: a key YAML reads as a boolean,
such as ``off``, fails as it does in the CLI); a parameter value is typed by
``rclpy.parameter.get_parameter_value``, which is the very function `ros2 param set` calls.
Then the request goes to the running motion process through the same ROS interfaces.
"""

import array
import importlib
import re
import shlex
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import yaml

#: a fenced code block: its language and its text
BLOCK = re.compile(r'^```(\w*)\n(.*?)^```', re.S | re.M)
#: the languages of the blocks a person types into a shell
SHELL = ('bash', 'sh', 'shell', 'console')
#: an inline code span (one backtick)
SPAN = re.compile(r'(?<!`)`([^`]+)`(?!`)')


class CommandFailed(Exception):
    """A `ros2` command failed as the CLI would, or did not do what it says."""


def ros2_commands(text: str) -> List[str]:
    r"""
    Return every complete `ros2 ...` command of a Markdown text, in order.

    A command is a line of a shell code block that starts with ``ros2 `` (``\\`` continuations
    joined, a trailing ``# comment`` dropped), or an inline code span that starts with
    ``ros2 `` and names something absolute (`` /...``): a span such as `ros2 param` only
    mentions the tool.
    """
    found: List[Tuple[int, int, str]] = []
    for block in BLOCK.finditer(text):
        if block.group(1) not in SHELL:
            continue  # a drawing, YAML, Python
        body = block.group(2).replace('\\\n', ' ')
        for number, line in enumerate(body.splitlines()):
            if line.strip().startswith('ros2 '):
                found.append((block.start(), number,
                              shlex.join(shlex.split(line, comments=True))))
    outside = BLOCK.sub(lambda m: ' ' * len(m.group(0)), text)
    for span in SPAN.finditer(outside):
        command = ' '.join(span.group(1).split())
        if command.startswith('ros2 ') and ' /' in command:
            found.append((span.start(), 0, shlex.join(shlex.split(command))))
    return [command for _, _, command in sorted(found)]


# --- the CLI's parsing -----------------------------------------------------------------------


def interface_type(name: str, kind: str) -> Any:
    """Return the Python class of ``pkg/kind/Name`` (or ``pkg/Name``), as ros2cli imports it."""
    parts = name.split('/')
    if len(parts) == 2:
        parts = [parts[0], kind, parts[1]]
    if len(parts) != 3 or parts[1] != kind:
        raise CommandFailed(f'The passed {kind} type is invalid: {name}')
    try:
        return getattr(importlib.import_module(f'{parts[0]}.{parts[1]}'), parts[2])
    except (ImportError, AttributeError):
        raise CommandFailed(f'The passed {kind} type is invalid: {name}') from None


def yaml_values(text: Optional[str]) -> Dict[Any, Any]:
    """Read a message's values as the CLI does (an absent or empty text: no values)."""
    values = yaml.safe_load(text) if text else {}
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise CommandFailed('The passed value needs to be a dictionary in YAML format')
    return values


def set_message_fields(msg: Any, values: Any) -> None:
    """
    Fill ``msg`` from ``values`` as ``rosidl_runtime_py.set_message_fields`` does.

    Each key names the attribute set (``getattr(msg, key)``: a non-string key, which YAML
    makes of ``off``, ``on``, ``yes``, ``no``, raises "attribute name must be string"); a
    value of another type is converted by the field's type, or filled in as a message.

    :raises CommandFailed: what the CLI reports, in its words.
    """
    if not isinstance(values, dict):
        raise CommandFailed(f"Value '{values}' is expected to be a dictionary but is a "
                            f'{type(values).__name__}')
    slot_types = dict(zip(msg.get_fields_and_field_types(), msg.SLOT_TYPES))
    for name, value in values.items():
        try:
            field = getattr(msg, name)
        except (TypeError, AttributeError) as error:
            raise CommandFailed(f'Failed to populate field: {error}') from None
        kind = type(field)
        if kind is array.array:
            new = array.array(field.typecode, value)
        elif kind is numpy.ndarray:
            new = numpy.array(value, dtype=field.dtype)
        elif type(value) is kind:
            new = value
        else:
            try:
                new = kind(value)
            except TypeError:
                new = kind()
                set_message_fields(new, value)
        element = getattr(slot_types[name], 'value_type', None)
        if element is not None and hasattr(element, 'namespaces'):
            element_type = getattr(importlib.import_module('.'.join(element.namespaces)),
                                   element.name)
            for index, item in enumerate(new):
                sub = element_type()
                set_message_fields(sub, item)
                new[index] = sub
        try:
            setattr(msg, name, new)
        except (TypeError, AssertionError, ValueError) as error:
            raise CommandFailed(f'Failed to populate field: {error}') from None


def message(kind: Any, text: Optional[str]) -> Any:
    """Return a ``kind`` message filled from the YAML ``text``."""
    msg = kind()
    set_message_fields(msg, yaml_values(text))
    return msg


# --- the verbs -------------------------------------------------------------------------------


class Ros2Cli:
    """
    Run `ros2` commands from a node spun elsewhere (a test's RosPeer).

    :param node: the rclpy node the requests go out from.
    :param timeout: how long discovery and each answer may take [s] (the CLI waits for ever).
    :param python: argv prefix that runs the package's console scripts (for `ros2 run`).
    """

    def __init__(self, node: Any, timeout: float = 30.0,
                 scripts: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> None:
        self.node = node
        self.timeout = timeout
        self.scripts = scripts or {}
        self.cwd = cwd

    def run(self, command: str) -> str:
        """
        Run one command; return what it says.

        :raises CommandFailed: refused by the CLI's parsing, not answered, or not successful.
        """
        words = shlex.split(command)
        assert words[0] == 'ros2', command
        verb = tuple(words[1:3])
        handlers = {('topic', 'pub'): self.topic_pub, ('service', 'call'): self.service_call,
                    ('action', 'send_goal'): self.action_send_goal,
                    ('lifecycle', 'set'): self.lifecycle_set, ('param', 'set'): self.param_set,
                    ('param', 'get'): self.param_get,
                    ('control', 'list_controllers'): self.list_controllers}
        if verb in handlers:
            return handlers[verb](words[3:])
        if words[1] == 'run':
            return self.ros2_run(words[2:])
        raise CommandFailed(f'no runner for {command!r}')

    # --- helpers

    def _wait(self, future: Any, what: str) -> Any:
        deadline = time.monotonic() + self.timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise CommandFailed(f'no answer within {self.timeout:g} s: {what}')
            time.sleep(0.01)
        return future.result()

    def _until(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not ready():
            if time.monotonic() > deadline:
                raise CommandFailed(f'{what} not within {self.timeout:g} s')
            time.sleep(0.02)

    def _call(self, srv_type: Any, name: str, request: Any) -> Any:
        client = self.node.create_client(srv_type, name)
        try:
            self._until(client.service_is_ready, f'service {name}')
            # as the CLI's: one request; Fast DDS may drop the first answer to a new client
            # (docs: Limitations), so a request is repeated once after a silence
            for attempt in range(2):
                future = client.call_async(request)
                deadline = time.monotonic() + (3.0 if attempt == 0 else self.timeout)
                while not future.done() and time.monotonic() < deadline:
                    time.sleep(0.01)
                if future.done():
                    return future.result()
            raise CommandFailed(f'no answer from {name}')
        finally:
            self.node.destroy_client(client)

    @staticmethod
    def _options(words: Sequence[str], with_value: Sequence[str]) -> Tuple[List[str], Dict]:
        positional, options = [], {}
        it = iter(words)
        for word in it:
            if word.startswith('-'):
                options[word] = next(it) if word in with_value else True
            else:
                positional.append(word)
        return positional, options

    # --- verbs

    def topic_pub(self, words: Sequence[str]) -> str:
        """`ros2 topic pub [-r RATE] [-1] TOPIC TYPE [VALUES]`: publish until it is heard."""
        args, options = self._options(words, ('-r', '--rate', '-t', '--times', '--qos-profile',
                                              '--qos-depth', '--qos-history',
                                              '--qos-reliability', '--qos-durability'))
        topic, kind = args[0], interface_type(args[1], 'msg')
        msg = message(kind, args[2] if len(args) > 2 else None)
        rate = float(options.get('-r', options.get('--rate', 1.0)))
        publisher = self.node.create_publisher(kind, topic, 10)
        try:
            # what a person sees: the motion process listens on that topic
            self._until(lambda: publisher.get_subscription_count() > 0,
                        f'a subscriber of {topic}')
            for _ in range(5):
                publisher.publish(msg)
                time.sleep(1.0 / rate)
        finally:
            self.node.destroy_publisher(publisher)
        return f'publishing #5: {msg}'

    def service_call(self, words: Sequence[str]) -> str:
        """`ros2 service call SERVICE TYPE [VALUES]`: the response; success if it has one."""
        args, _ = self._options(words, ('-r', '--rate'))
        kind = interface_type(args[1], 'srv')
        request = message(kind.Request, args[2] if len(args) > 2 else None)
        response = self._call(kind, args[0], request)
        if getattr(response, 'success', True) is not True:
            raise CommandFailed(f'{args[0]} answered: {response}')
        return f'response:\n{response}'

    def action_send_goal(self, words: Sequence[str]) -> str:
        """`ros2 action send_goal ACTION TYPE VALUES [-f]`: accepted, then succeeded."""
        from action_msgs.msg import GoalStatus
        from rclpy.action import ActionClient
        args, _ = self._options(words, ())
        kind = interface_type(args[1], 'action')
        goal = message(kind.Goal, args[2] if len(args) > 2 else None)
        client = ActionClient(self.node, kind, args[0])
        try:
            self._until(client.server_is_ready, f'action server {args[0]}')
            handle = self._wait(client.send_goal_async(goal, feedback_callback=lambda _: None),
                                'goal response')
            if not handle.accepted:
                raise CommandFailed('Goal was rejected.')
            result = self._wait(handle.get_result_async(), 'result')
        finally:
            client.destroy()
        if result.status != GoalStatus.STATUS_SUCCEEDED:
            raise CommandFailed(f'Goal finished with status {result.status}: {result.result}')
        return f'Result:\n{result.result}\nGoal finished with status: SUCCEEDED'

    def lifecycle_set(self, words: Sequence[str]) -> str:
        """`ros2 lifecycle set NODE TRANSITION`: by the label of an available transition."""
        from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions
        node, label = words[0], words[1]
        available = self._call(GetAvailableTransitions, f'{node}/get_available_transitions',
                               GetAvailableTransitions.Request())
        for transition in available.available_transitions:
            if transition.transition.label == label:
                request = ChangeState.Request()
                request.transition = transition.transition
                if not self._call(ChangeState, f'{node}/change_state', request).success:
                    raise CommandFailed('Transitioning failed')
                return 'Transitioning successful'
        raise CommandFailed(f'Unknown transition requested, available ones are: '
                            f'{[t.transition.label for t in available.available_transitions]}')

    def param_set(self, words: Sequence[str]) -> str:
        """`ros2 param set NODE NAME VALUE`: typed by YAML alone, as the CLI types it."""
        from rcl_interfaces.msg import Parameter
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import get_parameter_value
        node, name, value = words[:3]
        request = SetParameters.Request(parameters=[Parameter(
            name=name, value=get_parameter_value(string_value=value))])
        result = self._call(SetParameters, f'{node}/set_parameters', request).results[0]
        if not result.successful:
            raise CommandFailed(f'Setting parameter failed: {result.reason}')
        return 'Set parameter successful'

    def param_get(self, words: Sequence[str]) -> str:
        """`ros2 param get NODE NAME`."""
        from rcl_interfaces.msg import ParameterType
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python
        node, name = words[:2]
        values = self._call(GetParameters, f'{node}/get_parameters',
                            GetParameters.Request(names=[name])).values
        if not values or values[0].type == ParameterType.PARAMETER_NOT_SET:
            raise CommandFailed('Parameter not set.')
        return f'value is: {parameter_value_to_python(values[0])}'

    def list_controllers(self, words: Sequence[str]) -> str:
        """`ros2 control list_controllers -c MANAGER`: one line per controller."""
        from controller_manager_msgs.srv import ListControllers
        _, options = self._options(words, ('-c', '--controller-manager'))
        manager = options.get('-c', options.get('--controller-manager', '/controller_manager'))
        controllers = self._call(ListControllers, f'{manager}/list_controllers',
                                 ListControllers.Request()).controller
        if not controllers:
            raise CommandFailed(f'{manager} lists no controller')
        return '\n'.join(f'{c.name} {c.type} {c.state}' for c in controllers)

    def ros2_run(self, words: Sequence[str]) -> str:
        """`ros2 run PACKAGE EXECUTABLE ARGS`: the package's console script of that name."""
        package, executable, *rest = words
        entry = self.scripts.get(f'{package} {executable}')
        if entry is None:
            raise CommandFailed(f'No executable found: {package} {executable}')
        module, function = entry.split(':')
        done = subprocess.run(
            [sys.executable, '-c', f'import sys; from {module} import {function} as main; '
             'sys.exit(main())', *rest], capture_output=True, text=True,
            timeout=self.timeout * 4, cwd=self.cwd)
        if done.returncode != 0:
            raise CommandFailed(f'exit {done.returncode}: {done.stdout}{done.stderr}')
        return done.stdout
