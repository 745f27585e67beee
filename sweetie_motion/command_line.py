"""
The grammar every `sweetie-motion` command shares.

One parser class for the top level and every subcommand: a mistake is one line on standard
error (what was wrong, the closest valid word, where the help is) with exit status 2, the
help shows each option's default, and the values a person types (seconds, namespaces) are
checked by the same functions everywhere. Imports no rclpy.
"""

import argparse
import os
import subprocess
import sys
from typing import Any, Callable, List, NoReturn, Sequence, TypeVar

from sweetie_motion.errors import did_you_mean

#: the exit status of a command given bad input (as argparse's own)
USAGE_ERROR = 2


class HelpFormatter(argparse.HelpFormatter):
    """
    Wrap description paragraphs, keep indented ones (tables) as written, show defaults.

    An option's default is appended to its help unless the help already speaks of it or
    there is nothing to show (no default, a flag).
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap
        paragraphs = []
        for paragraph in text.strip('\n').split('\n\n'):
            if any(line.startswith(' ') for line in paragraph.splitlines()):
                paragraphs.append(textwrap.indent(paragraph, indent))
            else:
                paragraphs.append(textwrap.fill(' '.join(paragraph.split()), width,
                                                initial_indent=indent, subsequent_indent=indent))
        return '\n\n'.join(paragraphs)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ''
        default = action.default
        if 'default' in text or default is None or isinstance(default, bool) or \
                default in ([], '', argparse.SUPPRESS):
            return text
        if action.option_strings or action.nargs in ('?', '*'):
            return f'{text} (default: %(default)s)'
        return text


class CommandParser(argparse.ArgumentParser):
    """
    An argument parser whose errors are one line with a hint, exit status 2.

    Subparsers are of the same class (argparse makes them of their parent's class), so a
    mistake after a subcommand names that subcommand and its help.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault('formatter_class', HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print one line (the mistake, a hint, where the help is) and exit with status 2."""
        line = ' '.join(message.split())
        self.exit(USAGE_ERROR, f'{self.prog}: {line}; see `{self.prog} --help`\n')

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's own message lists the choices but not the one meant
        if action.choices is not None and value not in action.choices:
            choices = [str(c) for c in action.choices]
            raise argparse.ArgumentError(
                action, f'invalid choice {value!r}{did_you_mean(value, choices)} (choose from '
                        f'{", ".join(choices)})')

    def option_names(self) -> List[str]:
        """Return every option string this parser knows ('--speed', '-h', ...)."""
        return list(self._option_string_actions)

    def reject_unrecognized(self, words: Sequence[str]) -> NoReturn:
        """Fail naming the first word this parser does not know, with the closest option."""
        word = words[0]
        if word.startswith('-'):
            option = word.split('=', 1)[0]
            self.error(f'unrecognized option {option}{did_you_mean(option, self.option_names())}')
        self.error(f'unexpected argument {word!r}')

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Parse what this parser knows; remember the innermost subcommand left with the rest."""
        parsed, rest = super().parse_known_args(args, namespace)
        if rest and getattr(parsed, _LEFT_BY, None) is None:
            setattr(parsed, _LEFT_BY, self)
        return parsed, rest

    # argparse's stub declares overloads per namespace type; this one keeps the behaviour
    def parse_args(self, args: Any = None,  # type: ignore[override]
                   namespace: Any = None) -> argparse.Namespace:
        """Parse all of ``args``; an unknown word fails naming the subcommand's closest option."""
        parsed, rest = self.parse_known_args(args, namespace)
        if rest:
            left_by(parsed, self).reject_unrecognized(rest)
        return parsed


#: the attribute of a parsed namespace naming the innermost parser that left words unparsed
_LEFT_BY = '_unrecognized_by'


def left_by(parsed: argparse.Namespace, default: CommandParser) -> CommandParser:
    """Return the innermost (sub)command parser that did not know some of the words."""
    parser = getattr(parsed, _LEFT_BY, None)
    return parser if isinstance(parser, CommandParser) else default


#: what an option's text converts to
Value = TypeVar('Value')


def _checked(text: str, convert: Callable[[str], Value], noun: str,
             valid: Callable[[Value], bool], requirement: str) -> Value:
    """Convert ``text``; refuse what does not convert (not ``noun``) or is not ``valid``."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not {noun}') from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f'{text} is not {requirement}')
    return value


def positive_seconds(text: str) -> float:
    """Return ``text`` as a positive, finite number of seconds (an argparse type)."""
    return _checked(text, float, 'a number of seconds', lambda v: 0 < v < float('inf'),
                    'a positive number of seconds')


def positive_count(text: str) -> int:
    """Return ``text`` as a whole number >= 1 (an argparse type)."""
    return _checked(text, int, 'a whole number', lambda v: v >= 1, 'a whole number >= 1')


def positive_number(text: str) -> float:
    """Return ``text`` as a positive, finite number (an argparse type)."""
    return _checked(text, float, 'a number', lambda v: 0 < v < float('inf'),
                    'a positive number')


def non_negative_number(text: str) -> float:
    """Return ``text`` as a finite number >= 0 (an argparse type)."""
    return _checked(text, float, 'a number', lambda v: 0 <= v < float('inf'),
                    'a number >= 0')


def namespace(text: str) -> str:
    """Return a ROS namespace without its slashes (an argparse type)."""
    from sweetie_motion.errors import ConfigError
    from sweetie_motion.ros_arguments import check_namespace
    try:
        return check_namespace(text, 'namespace')
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).split(': ', 1)[-1]) from None


def add_connection_options(parser: argparse.ArgumentParser, default_namespace: str) -> None:
    """Add --namespace and --timeout: where the motion process is, how long to wait for it."""
    parser.add_argument('--namespace', type=namespace, default=default_namespace,
                        help='robot namespace of the motion process')
    parser.add_argument('--timeout', type=positive_seconds, default=15.0,
                        help='seconds to wait for the motion process')


def notice(message: str) -> None:
    """Tell the person at the terminal what a command waits for (standard error)."""
    print(message, file=sys.stderr, flush=True)


def fail(command: str, message: str) -> int:
    """Print ``sweetie-motion COMMAND: message`` on standard error; return exit status 2."""
    print(f'{command}: {message}', file=sys.stderr)
    return USAGE_ERROR


def require_display() -> None:
    """
    Refuse to open a window where there is no display (Qt would abort the process).

    :raises SweetieMotionError: no QT_QPA_PLATFORM chosen and neither DISPLAY nor
        WAYLAND_DISPLAY set on Linux.
    """
    from sweetie_motion.errors import SweetieMotionError
    if os.environ.get('QT_QPA_PLATFORM') or not sys.platform.startswith('linux'):
        return
    if os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY'):
        return
    raise SweetieMotionError('no display (DISPLAY is not set): run it in a desktop session or '
                             'with ssh -X, or render the window into a file: '
                             'QT_QPA_PLATFORM=offscreen ... --screenshot FILE --quit-after 3')


def start_own_bringup(arguments: Sequence[str], **popen: Any) -> subprocess.Popen:
    """
    Start `sweetie-motion bringup` for a window or the demo (``--with-robot``).

    The bringup runs in a session of its own, so that Ctrl+C in the terminal reaches only the
    window, which stops the robot first and ends the bringup after; and with
    ``--stop-with-parent``, so that a window that is killed leaves no motion process behind
    (its pendant stops the motion; the bringup ends once the robot is at rest).

    :param arguments: the bringup's options (``['--namespace', 'sweetie_bot']``).
    :param popen: more arguments of subprocess.Popen (stdout, env).
    """
    return subprocess.Popen([sys.executable, '-m', 'sweetie_motion.cli', 'bringup',
                             '--stop-with-parent', *arguments], start_new_session=True, **popen)
