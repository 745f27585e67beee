"""
The motion program language (R-CART-3): a small G-code-like language, ours to design.

One command per line; a line may also be blank or only a comment. Words are case-insensitive
(joint names are kept as written). Example::

    ; pick a mandrel from the turntable (the paper's waypoints 2 to 5)
    SPEED 50                           ; 50 % of the planned speed from here on
    HOME
    MOVJ -90 0 0 0 0 0 V30             ; every joint, degrees, at most 30 deg/s
    MOVJ joint5=45 joint6=-10.5 RAD    ; named joints, here in radians (RAD)
    MOVL X1037 Y0 Z735 A180 B-90 C0 F200 R20
    MOVL X1080 R5                      ; Y, Z, orientation and feed as before (modal)
    GRIP CLAMP                         (clamp the mandrel)
    WAIT 0.5
    MOVL Z745 R0

Grammar (EBNF; blanks separate words and may be left out between address words)::

    program     = { line } ;
    line        = [ command ] [ comment ] newline ;
    command     = joint_move | linear_move | wait | speed | gripper | home ;
    joint_move  = "MOVJ" joint_item { joint_item } ;
    joint_item  = number | name "=" number | "V" number | "DEG" | "RAD" ;
    linear_move = "MOVL" linear_word { linear_word } ;
    linear_word = ( "X" | "Y" | "Z" | "A" | "B" | "C" | "R" | "F" ) number ;
    wait        = "WAIT" number ;
    speed       = "SPEED" number ;
    gripper     = "GRIP" ( "CLAMP" | "RELEASE" | "HOLD" ) ;
    home        = "HOME" ;
    number      = [ "+" | "-" ] ( digits [ "." [ digits ] ] | "." digits ) ;
    name        = ( letter | "_" ) { letter | digit | "_" } ;
    comment     = ";" { any character }            (* to the end of the line *)
                | "(" { any character but ")" } ")" ;   (* anywhere, not nested *)

An address word is its letter immediately followed by its number (``X1037``, ``B-90``).

Meaning:

- ``MOVJ``: a joint-space move (it bypasses the Cartesian stages). Either one value per joint
  of the chain, in chain order, or ``name=value`` for some joints (the others stay); degrees
  unless ``RAD`` (then radians, and V in rad/s); ``V``: the joints' speed limit [deg/s], by
  default the joints' own limits. Positional and named values are not mixed.
- ``MOVL``: a straight move of the tool to X Y Z [mm] with the orientation A B C (ZYZ Euler
  angles [deg], see :mod:`sweetie_motion.cartesian.frames`; the three together or none); a
  coordinate or the orientation left out keeps its previous value (modal, as in G-code).
  ``R``: the blend radius [mm] of the corner at this move's target (0 or none: stop there);
  ``F``: the feed, the path speed [mm/s], kept for the following moves (modal). Consecutive
  MOVL form one path (:func:`linear_run`); any other command ends it with a stop.
- ``WAIT s``: wait s >= 0 seconds. ``SPEED p``: speed override, p percent in (0, 100], for
  the moves that follow (the motions are played slower in time, their shape kept).
- ``GRIP CLAMP | RELEASE | HOLD``: the gripper holding the mandrel (the paper's end effector).
- ``HOME``: every joint to the home pose.

:func:`parse_line` parses one line (the console), :func:`parse_program` a file's text; errors
are :class:`ProgramError` with line and column (1-based) and a caret under the token.
:func:`format_program` writes commands back (``parse_program(format_program(c)) == c``);
:func:`from_path` writes the program of a planned path, as the paper's software does.
"""

from dataclasses import dataclass, field
import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from sweetie_motion.cartesian.frames import euler_zyz, MM, Pose
from sweetie_motion.cartesian.path import CartesianPath
from sweetie_motion.errors import SweetieMotionError

COMMANDS = ('MOVJ', 'MOVL', 'WAIT', 'SPEED', 'GRIP', 'HOME')
GRIPPER_ACTIONS = ('CLAMP', 'RELEASE', 'HOLD')
LINEAR_WORDS = 'XYZABCRF'


class ProgramError(SweetieMotionError):
    """
    A program line cannot be parsed.

    :param line: line number (1-based); :param column: column of the offending token
        (1-based; one past the end when something is missing); :param reason: what is wrong;
    :param text: the line's text; :param source: the file's name, if any.
    """

    def __init__(self, line: int, column: int, reason: str, text: str = '',
                 source: Optional[str] = None) -> None:
        self.line = line
        self.column = column
        self.reason = reason
        self.text = text
        self.source = source
        where = f'{source}:' if source else 'line '
        message = f'{where}{line}:{column}: {reason}'
        if text:
            message += f'\n    {text}\n    {" " * (column - 1)}^'
        super().__init__(message)


# --- commands --------------------------------------------------------------------------------


@dataclass(frozen=True)
class JointMove:
    """
    ``MOVJ``: a joint-space move.

    :param positions: one value per joint of the chain, in chain order (or empty).
    :param joints: (name, value) of some joints (or empty).
    :param speed: the joints' speed limit [unit/s], None: their own limits.
    :param unit: 'deg' or 'rad', of the values and the speed.
    :param line: the source line (not compared).
    """

    positions: Tuple[float, ...] = ()
    joints: Tuple[Tuple[str, float], ...] = ()
    speed: Optional[float] = None
    unit: str = 'deg'
    line: int = field(default=0, compare=False)

    def _rad(self, value: float) -> float:
        return float(np.radians(value)) if self.unit == 'deg' else float(value)

    def radians(self) -> Union[Tuple[float, ...], Tuple[Tuple[str, float], ...]]:
        """Return the positions (or the (name, value) pairs) in radians."""
        if self.positions:
            return self.position_radians()
        return self.joint_radians()

    def position_radians(self) -> Tuple[float, ...]:
        """Return the positions in radians, chain order (empty when joints are named)."""
        return tuple(self._rad(v) for v in self.positions)

    def joint_radians(self) -> Tuple[Tuple[str, float], ...]:
        """Return the (name, value) pairs, values in radians (empty when positional)."""
        return tuple((name, self._rad(v)) for name, v in self.joints)

    def speed_radians(self) -> Optional[float]:
        """Return the speed limit [rad/s] (None: the joints' own)."""
        return None if self.speed is None else self._rad(self.speed)


@dataclass(frozen=True)
class LinearMove:
    """
    ``MOVL``: a straight move of the tool; None: the previous value (modal).

    :param x: [mm]; :param y: [mm]; :param z: [mm].
    :param orientation: ZYZ Euler angles (A, B, C) [deg].
    :param radius: blend radius at the target [mm] (None or 0: stop there).
    :param feed: path speed [mm/s] from this move on.
    :param line: the source line (not compared).
    """

    x: Optional[float] = None
    y: Optional[float] = None
    z: Optional[float] = None
    orientation: Optional[Tuple[float, float, float]] = None
    radius: Optional[float] = None
    feed: Optional[float] = None
    line: int = field(default=0, compare=False)

    def target(self, previous: Pose) -> Pose:
        """Return the target pose, taking what this move leaves out from ``previous``."""
        position = [float(p) for p in previous.position]
        for axis, value in enumerate((self.x, self.y, self.z)):
            if value is not None:
                position[axis] = value * MM
        rotation = (previous.rotation if self.orientation is None
                    else euler_zyz(*self.orientation, degrees=True))
        return Pose(np.array(position), rotation)


@dataclass(frozen=True)
class Wait:
    """``WAIT``: wait ``seconds`` [s]."""

    seconds: float
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SpeedOverride:
    """``SPEED``: speed override for what follows, ``percent`` in (0, 100]."""

    percent: float
    line: int = field(default=0, compare=False)

    @property
    def factor(self) -> float:
        """Return the override as a factor in (0, 1]."""
        return self.percent / 100.0


@dataclass(frozen=True)
class Gripper:
    """``GRIP``: ``action`` is 'clamp', 'release' or 'hold'."""

    action: str
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Home:
    """``HOME``: every joint to the home pose."""

    line: int = field(default=0, compare=False)


Command = Union[JointMove, LinearMove, Wait, SpeedOverride, Gripper, Home]


# --- scanning --------------------------------------------------------------------------------

_NUMBER = re.compile(r'[+-]?(?:\d+(?:\.\d*)?|\.\d+)')
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_ASSIGN = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*')


@dataclass(frozen=True)
class _Token:
    kind: str  # 'word', 'number', 'address' (letter + number), 'named' (name=number)
    text: str
    column: int  # 1-based
    name: str = ''
    value: float = 0.0


class _Line:
    """One line being parsed: its text, number and source, to make errors."""

    def __init__(self, text: str, number: int, source: Optional[str]) -> None:
        self.text = text.rstrip('\r\n')
        self.number = number
        self.source = source

    def error(self, column: int, reason: str) -> ProgramError:
        return ProgramError(self.number, column, reason, self.text, self.source)

    def tokens(self) -> List[_Token]:
        text = self.text
        tokens: List[_Token] = []
        i = 0
        while i < len(text):
            char = text[i]
            if char in ' \t':
                i += 1
            elif char == ';':
                break
            elif char == '(':
                end = text.find(')', i + 1)
                if end < 0:
                    raise self.error(i + 1, "comment not closed: ')' missing")
                i = end + 1
            elif char == ')':
                raise self.error(i + 1, "')' without '('")
            elif char.isalpha() or char == '_':
                i = self._word(i, tokens)
            elif char in '+-.' or char.isdigit():
                match = _NUMBER.match(text, i)
                if match is None:
                    raise self.error(i + 1, f'unexpected {char!r}: a number has digits')
                i = self._number_end(match, i)
                tokens.append(_Token('number', match.group(), match.start() + 1,
                                     value=float(match.group())))
            else:
                raise self.error(i + 1, f'unexpected character {char!r}')
        return tokens

    def _number_end(self, match: 're.Match', start: int) -> int:
        text = self.text
        end = match.end()
        if end >= len(text):
            return end
        # G-code's compact words (X10Y20Z30) are upper case; a lower-case letter right after a
        # number is a typo (Z7x35 for Z735 would move the tool to X35)
        typo = text[end].islower() or (text[end].isupper() and text[start].islower())
        if text[end] in '._' or typo:
            bad = re.split(r'[ \t;(]', text[start:], maxsplit=1)[0]
            extra = ' (separate words by spaces)' if typo else ''
            raise self.error(start + 1, f'malformed number {bad!r}{extra}')
        return end

    def _word(self, i: int, tokens: List[_Token]) -> int:
        text = self.text
        assign = _ASSIGN.match(text, i)
        if assign is not None:
            number = _NUMBER.match(text, assign.end())
            if number is None:
                raise self.error(assign.end() + 1, f'expected a number after '
                                 f'{assign.group(1)}=')
            end = self._number_end(number, number.start())
            tokens.append(_Token('named', text[i:end], i + 1, assign.group(1),
                                 float(number.group())))
            return end
        if i + 1 < len(text) and (text[i + 1] in '+-.' or text[i + 1].isdigit()):
            number = _NUMBER.match(text, i + 1)
            if number is None:
                raise self.error(i + 1, f'{text[i]} needs a number right after it, e.g. '
                                 f'{text[i].upper()}10')
            end = self._number_end(number, i)
            tokens.append(_Token('address', text[i:end], i + 1, text[i].upper(),
                                 float(number.group())))
            return end
        match = _NAME.match(text, i)
        if match is None:  # the caller saw a letter or '_' here
            raise self.error(i + 1, f'unexpected {text[i]!r}')
        tokens.append(_Token('word', match.group(), i + 1, match.group().upper()))
        return match.end()


# --- parsing ---------------------------------------------------------------------------------


def _describe(token: _Token) -> str:
    return repr(token.text)


class _Parser:
    """Parses the tokens of one line into a command."""

    def __init__(self, line: _Line) -> None:
        self.line = line

    def parse(self) -> Optional[Command]:
        tokens = self.line.tokens()
        if not tokens:
            return None
        head, rest = tokens[0], tokens[1:]
        name = head.name if head.kind == 'word' else ''
        if name not in COMMANDS:
            raise self.line.error(head.column, f'unknown command {head.text!r} (commands: '
                                  f'{", ".join(COMMANDS)})')
        parsers: Dict[str, Callable[[_Token, List[_Token]], Command]] = {
            'MOVJ': self._movj, 'MOVL': self._movl, 'WAIT': self._wait,
            'SPEED': self._speed, 'GRIP': self._grip, 'HOME': self._home}
        return parsers[name](head, rest)

    def _end(self) -> int:
        return len(self.line.text) + 1

    def _only(self, head: _Token, rest: List[_Token], what: str) -> _Token:
        if not rest:
            raise self.line.error(self._end(), f'{head.name} needs {what}')
        if len(rest) > 1:
            raise self.line.error(rest[1].column, f'unexpected {_describe(rest[1])}: '
                                  f'{head.name} takes only {what}')
        return rest[0]

    def _number(self, head: _Token, rest: List[_Token], what: str) -> Tuple[float, _Token]:
        token = self._only(head, rest, what)
        if token.kind != 'number':
            raise self.line.error(token.column, f'{head.name} needs {what}, got '
                                  f'{_describe(token)}')
        return token.value, token

    def _wait(self, head: _Token, rest: List[_Token]) -> Wait:
        value, token = self._number(head, rest, 'a duration [s]')
        if value < 0:
            raise self.line.error(token.column, f'WAIT needs a duration >= 0 s, got '
                                  f'{token.text}')
        return Wait(value, self.line.number)

    def _speed(self, head: _Token, rest: List[_Token]) -> SpeedOverride:
        value, token = self._number(head, rest, 'a percentage')
        if not 0 < value <= 100:
            raise self.line.error(token.column, f'SPEED needs a percentage in (0, 100], got '
                                  f'{token.text}')
        return SpeedOverride(value, self.line.number)

    def _grip(self, head: _Token, rest: List[_Token]) -> Gripper:
        token = self._only(head, rest, 'CLAMP, RELEASE or HOLD')
        if token.kind != 'word' or token.name not in GRIPPER_ACTIONS:
            raise self.line.error(token.column, f'GRIP needs CLAMP, RELEASE or HOLD, got '
                                  f'{_describe(token)}')
        return Gripper(token.name.lower(), self.line.number)

    def _home(self, head: _Token, rest: List[_Token]) -> Home:
        if rest:
            raise self.line.error(rest[0].column, f'unexpected {_describe(rest[0])}: HOME '
                                  'takes nothing')
        return Home(self.line.number)

    def _movj(self, head: _Token, rest: List[_Token]) -> JointMove:
        positions: List[float] = []
        joints: List[Tuple[str, float]] = []
        speed = unit = None
        for token in rest:
            if token.kind == 'number' or token.kind == 'named':
                if (token.kind == 'number' and joints) or (token.kind == 'named' and positions):
                    raise self.line.error(token.column, 'MOVJ takes either one value per '
                                          'joint or name=value pairs, not both')
                if token.kind == 'number':
                    positions.append(token.value)
                elif any(name == token.name for name, _ in joints):
                    raise self.line.error(token.column, f'joint {token.name} given twice')
                else:
                    joints.append((token.name, token.value))
            elif token.kind == 'address' and token.name == 'V':
                if speed is not None:
                    raise self.line.error(token.column, 'V (joint speed) given twice')
                if token.value <= 0:
                    raise self.line.error(token.column, f'V (joint speed) must be > 0, got '
                                          f'{token.text[1:]}')
                speed = token.value
            elif token.kind == 'word' and token.name in ('DEG', 'RAD'):
                if unit is not None:
                    raise self.line.error(token.column, 'the unit (DEG or RAD) given twice')
                unit = token.name.lower()
            else:
                raise self.line.error(token.column, f'unexpected {_describe(token)}: MOVJ '
                                      'takes joint values (numbers or name=value), V (speed) '
                                      'and DEG or RAD')
        if not positions and not joints:
            raise self.line.error(head.column, 'MOVJ needs joint values: one per joint, or '
                                  'name=value')
        return JointMove(tuple(positions), tuple(joints), speed, unit or 'deg',
                         self.line.number)

    def _movl(self, head: _Token, rest: List[_Token]) -> LinearMove:
        words = {}
        columns = {}
        for token in rest:
            letter = token.name.upper() if token.kind in ('address', 'named') else ''
            if token.kind == 'named' and len(token.name) != 1:
                letter = ''
            if token.kind == 'word' and len(token.name) == 1 and token.name in LINEAR_WORDS:
                raise self.line.error(token.column, f'{token.name} needs a number right after '
                                      f'it, e.g. {token.name}10')
            if letter not in LINEAR_WORDS or not letter:
                raise self.line.error(token.column, f'unexpected {_describe(token)}: MOVL '
                                      'takes X Y Z [mm], A B C [deg], R [mm] and F [mm/s]')
            if letter in words:
                raise self.line.error(token.column, f'{letter} given twice')
            words[letter] = token.value
            columns[letter] = token.column
        if 'R' in words and words['R'] < 0:
            raise self.line.error(columns['R'], 'R (blend radius) must be >= 0 mm')
        if 'F' in words and words['F'] <= 0:
            raise self.line.error(columns['F'], 'F (feed) must be > 0 mm/s')
        angles = [c for c in 'ABC' if c in words]
        if angles and len(angles) < 3:
            missing = ' and '.join(c for c in 'ABC' if c not in words)
            raise self.line.error(columns[angles[0]], 'A B C (ZYZ angles) go together: '
                                  f'{missing} missing')
        if not any(c in words for c in 'XYZA'):
            raise self.line.error(head.column, 'MOVL needs a target: X, Y, Z [mm] and/or '
                                  'A B C [deg]')
        orientation = (words['A'], words['B'], words['C']) if angles else None
        return LinearMove(words.get('X'), words.get('Y'), words.get('Z'), orientation,
                          words.get('R'), words.get('F'), self.line.number)


def parse_line(text: str, line: int = 1, source: Optional[str] = None) -> Optional[Command]:
    """
    Parse one line (as typed in the console).

    :param text: the line.
    :param line: its number, for errors and :attr:`line` of the command.
    :param source: the file's name, for errors.
    :return: the command, None for a blank or comment-only line.
    :raises ProgramError: with line, column and a caret under the offending token.
    """
    if '\n' in text.rstrip('\r\n'):
        raise ProgramError(line, text.index('\n') + 1, 'one line expected; use '
                           'parse_program for several', text.split('\n')[0], source)
    return _Parser(_Line(text, line, source)).parse()


def parse_program(text: str, source: Optional[str] = None) -> List[Command]:
    """
    Parse a whole program.

    :param text: the program's text.
    :param source: the file's name, for errors.
    :return: the commands in order (blank and comment lines give none).
    :raises ProgramError: for the first line in error.
    """
    commands = []
    for number, line in enumerate(text.splitlines(), start=1):
        command = _Parser(_Line(line, number, source)).parse()
        if command is not None:
            commands.append(command)
    return commands


def load_program(path: str) -> List[Command]:
    """
    Read and parse a program file.

    :raises ProgramError: a line in error (the file's name in the message).
    :raises SweetieMotionError: the file cannot be read (why, in one line).
    """
    from sweetie_motion.paths import describe_file_error
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError) as error:
        raise SweetieMotionError(f'cannot read {describe_file_error(path, error)}') from None
    return parse_program(text, source=str(path))


# --- formatting --------------------------------------------------------------------------------


def format_number(value: float) -> str:
    """Return the shortest fixed-point text that parses back to exactly ``value``."""
    text = np.format_float_positional(float(value), trim='-')
    return '0' if text in ('-0', '0') else text


def format_command(command: Command) -> str:
    """Return the canonical text of a command (no comment)."""
    if isinstance(command, JointMove):
        words = ['MOVJ'] + [format_number(v) for v in command.positions]
        words += [f'{name}={format_number(v)}' for name, v in command.joints]
        if command.unit == 'rad':
            words.append('RAD')
        if command.speed is not None:
            words.append(f'V{format_number(command.speed)}')
        return ' '.join(words)
    if isinstance(command, LinearMove):
        words = ['MOVL']
        for letter, value in zip('XYZ', (command.x, command.y, command.z)):
            if value is not None:
                words.append(f'{letter}{format_number(value)}')
        if command.orientation is not None:
            words += [f'{c}{format_number(v)}' for c, v in zip('ABC', command.orientation)]
        if command.radius is not None:
            words.append(f'R{format_number(command.radius)}')
        if command.feed is not None:
            words.append(f'F{format_number(command.feed)}')
        return ' '.join(words)
    if isinstance(command, Wait):
        return f'WAIT {format_number(command.seconds)}'
    if isinstance(command, SpeedOverride):
        return f'SPEED {format_number(command.percent)}'
    if isinstance(command, Gripper):
        return f'GRIP {command.action.upper()}'
    if isinstance(command, Home):
        return 'HOME'
    raise TypeError(f'not a program command: {command!r}')


def format_program(commands: Iterable[Command], header: Sequence[str] = ()) -> str:
    """
    Return the text of a program: ``header`` lines as comments, then one command per line.

    ``parse_program(format_program(commands)) == commands``.
    """
    lines = [f'; {text}'.rstrip() for line in header for text in line.splitlines() or ['']]
    lines += [format_command(c) for c in commands]
    return '\n'.join(lines) + '\n'


# --- paths -------------------------------------------------------------------------------------


def from_path(path: CartesianPath, feed: Optional[float] = None) -> List[Command]:
    """
    Return the program of a planned path: one MOVL per waypoint kept.

    The first MOVL (to the first waypoint) stops there; the others carry the path's requested
    blend radii, so that :func:`linear_run` of the program, started at the first waypoint,
    plans the same path again. Positions are rounded to 0.1 um, angles to 1e-6 deg.

    :param path: the path.
    :param feed: path speed [m/s] written as F on the first move (None: none).
    """
    radii = path.requested_radii
    commands: List[Command] = []
    last = len(path.waypoints) - 1
    for k, pose in enumerate(path.waypoints):
        x, y, z, a, b, c = pose.mm_zyz(degrees=True)
        radius = None if k in (0, last) else round(float(radii[k]) / MM, 4)
        commands.append(LinearMove(
            round(x, 4), round(y, 4), round(z, 4), (round(a, 6), round(b, 6), round(c, 6)),
            radius, None if feed is None or k else round(feed / MM, 4)))
    return commands


def linear_run(moves: Sequence[LinearMove], start: Pose
               ) -> Tuple[List[Pose], List[float], List[Optional[float]]]:
    """
    Resolve consecutive MOVL commands into the waypoints of one path.

    :param moves: the MOVL commands, in order.
    :param start: the pose the run starts from (the tool's pose).
    :return: (waypoints: start then each target; blend radius per waypoint [m] for
        :class:`CartesianPath`; speed of the move arriving at each waypoint [m/s] for
        ``path_profile(speeds=...)``, None where no feed was given yet).
    """
    waypoints = [start]
    radii = [0.0]
    speeds: List[Optional[float]] = [None]
    feed = None
    for move in moves:
        if not isinstance(move, LinearMove):
            raise TypeError(f'linear_run takes MOVL commands, got {move!r}')
        waypoints.append(move.target(waypoints[-1]))
        radii.append(0.0 if move.radius is None else move.radius * MM)
        feed = feed if move.feed is None else move.feed * MM
        speeds.append(feed)
    return waypoints, radii, speeds


__all__ = ['COMMANDS', 'Command', 'GRIPPER_ACTIONS', 'Gripper', 'Home', 'JointMove',
           'LinearMove', 'ProgramError', 'SpeedOverride', 'Wait', 'format_command',
           'format_number', 'format_program', 'from_path', 'linear_run', 'load_program',
           'parse_line', 'parse_program']
