"""
Wrong invocations of every command: one line on standard error with a hint, exit 2, no trace.

A table of a few hundred mistakes a person makes at the terminal (typos of commands and
options, missing and unreadable files, bad values, bad namespaces, missing arguments) is run
through the real entry point in this process. None of them may reach ROS: each is refused
before anything waits.
"""

from pathlib import Path
from typing import List, Optional, Tuple

from sweetie_motion import cli

COMMANDS = ['describe', 'bringup', 'list', 'show', 'play', 'save', 'delete', 'retime', 'import',
            'export', 'editor', 'servo', 'servo-sim', 'program', 'console', 'demo']
SERVO_ACTIONS = ['status', 'scan', 'torque', 'clear', 'reboot', 'read', 'write', 'identify']
PROGRAM_ACTIONS = ['check', 'plot', 'run', 'from-path']

#: a command line that parses, and the options of it that a typo may hit
VALID = {
    ('play',): (['nod'], ['--speed', '--backward', '--namespace', '--timeout']),
    ('show',): (['nod'], ['--png', '--namespace', '--timeout']),
    ('list',): ([], ['--namespace', '--timeout']),
    ('save',): (['x', '--last'], ['--controller', '--namespace', '--timeout']),
    ('delete',): (['x'], ['--namespace', '--timeout']),
    ('retime',): (['nod'], ['--save-as', '--no-keep-pauses', '--interpolation', '--robot',
                            '--dry-run']),
    ('import',): (['f.json'], ['--clamp', '--name', '--dir', '--robot']),
    ('export',): ([], ['--out', '--namespace']),
    ('describe',): ([], ['--robot', '--png']),
    ('bringup',): ([], ['--config', '--namespace', '--period', '--no-autostart',
                        '--storage-dir', '--threads', '--bus', '--servos',
                        '--robot-description', '--description-timeout', '--in-process']),
    ('servo', 'status'): ([], ['--namespace', '--timeout']),
    ('servo', 'read'): (['torque_policy'], ['--namespace', '--timeout']),
    ('servo', 'identify'): ([], ['--joints', '--trajectory', '--png', '--abort',
                                 '--threshold']),
    ('servo-sim',): (['--servos', 'x.yaml'], ['--servos', '--bus', '--baud', '--latency',
                                              '--reboot-time', '--fault', '--seed', '--chunk',
                                              '--link', '--control', '--priority']),
    ('program', 'check'): (['p.txt'], ['--robot', '--chain', '--start', '--period', '--speed',
                                       '--acceleration', '--lateral']),
    ('program', 'run'): (['p.txt'], ['--robot', '--chain', '--namespace', '--step',
                                     '--timeout']),
    ('program', 'from-path'): (['p.yaml'], ['--radius', '--feed', '--out', '--home']),
    ('editor',): ([], ['--with-robot', '--namespace', '--screenshot', '--quit-after']),
    ('console',): ([], ['--config', '--namespace', '--robot', '--chain', '--with-robot',
                        '--program', '--workspace', '--jog-turn-limit',
                        '--reconfiguration-limit', '--screenshot',
                        '--quit-after']),
    ('demo',): ([], ['--out', '--seconds']),
}

#: options that take a number, the command before them, and what they refuse
NUMBERS = [
    (['play', 'nod'], '--speed', ['x', '0', '-1', 'nan', 'inf']),
    (['list'], '--timeout', ['x', '0', '-2', 'nan', 'inf']),
    (['show', 'nod'], '--timeout', ['soon', '-1']),
    (['servo', 'status'], '--timeout', ['x', '0', '-1']),
    (['servo', 'identify'], '--threshold', ['x', '0', '-0.1']),
    (['servo', 'write', 'led_control'], '', ['x', '1.5', '999', '-1']),
    (['bringup'], '--period', ['x', '5', '0', '-0.01', 'nan', 'inf', '1e-9']),
    (['bringup'], '--threads', ['x', '0', '-3', '2.5']),
    (['bringup'], '--description-timeout', ['x', '0', '-1']),
    (['program', 'check', 'programs/paper_path.txt'], '--period', ['x', '0', '-0.01']),
    (['program', 'check', 'programs/paper_path.txt'], '--speed', ['x', '0', '-5', 'inf']),
    (['program', 'check', 'programs/paper_path.txt'], '--acceleration', ['x', '0', 'nan']),
    (['program', 'check', 'programs/paper_path.txt'], '--lateral', ['x', '-1', 'inf']),
    (['program', 'run', 'programs/paper_path.txt'], '--timeout', ['x', '0']),
    (['program', 'from-path', 'paths/paper_path.yaml'], '--radius', ['x', '-1']),
    (['program', 'from-path', 'paths/paper_path.yaml'], '--feed', ['x', '-1']),
    (['servo-sim', '--servos', 'sweetie_bot_servos.yaml'], '--latency', ['x', '-1', '5']),
    (['servo-sim', '--servos', 'sweetie_bot_servos.yaml'], '--baud', ['x', '1234']),
    (['servo-sim', '--servos', 'sweetie_bot_servos.yaml'], '--priority', ['x']),
    (['servo-sim', '--servos', 'sweetie_bot_servos.yaml'], '--fault', ['x', 'drop=2',
                                                                       'jam=x']),
    (['editor'], '--quit-after', ['x', '0', '-1']),
    (['console'], '--quit-after', ['x', '-1']),
    (['demo'], '--seconds', ['x', '0', '-5']),
]

#: commands with --namespace (what comes before the option)
WITH_NAMESPACE = [['list'], ['play', 'nod'], ['show', 'nod'], ['save', 'x', '--last'],
                  ['delete', 'x'], ['export'], ['retime', 'nod'], ['import', 'f.json'],
                  ['servo', 'status'], ['servo', 'identify'], ['servo', 'scan'],
                  ['program', 'run', 'programs/paper_path.txt'], ['bringup'], ['editor'],
                  ['console']]
BAD_NAMESPACES = ['bad ns', '1robot', 'robot-1', 'a//b', 'pony.1']

#: arguments missing
MISSING = [['play'], ['show'], ['delete'], ['save'], ['save', 'x'], ['retime'], ['import'],
           ['servo'], ['servo', 'torque'], ['servo', 'read'], ['servo', 'write'],
           ['servo', 'write', 'led_control'], ['servo', 'write', 'led_control', '1'],
           ['program'], ['program', 'check'], ['program', 'plot'], ['program', 'run'],
           ['program', 'from-path'], ['servo-sim'], [], ['play', 'nod', '--speed'],
           ['list', '--namespace'], ['bringup', '--config'], ['servo', 'identify', '--joints'],
           ['save', 'x', '--last', '--file', 'f.yaml'], ['servo', 'torque', 'maybe']]

#: trajectory names that cannot be stored
BAD_NAMES = ['bad name', '1abc', 'a/b', 'x' * 65, 'nod!', '']


def typos(word: str) -> List[str]:
    """Return misspellings of ``word``: a letter dropped, two swapped, one doubled."""
    stem = word.lstrip('-')
    dashes = word[:len(word) - len(stem)]
    found = []
    if len(stem) > 3:
        found.append(stem[:2] + stem[3:])                      # drop
        found.append(stem[:1] + stem[2] + stem[1] + stem[3:])  # swap
    found.append(stem[:2] + stem[1] + stem[2:])                # double
    return [dashes + t for t in dict.fromkeys(found) if t != stem]


def cases(tmp: Path) -> List[Tuple[List[str], Optional[str]]]:
    """Return (argv, text the message must hold) for every mistake of the table."""
    table: List[Tuple[List[str], Optional[str]]] = []
    malformed_json, malformed_yaml = tmp / 'malformed.json', tmp / 'malformed.yaml'
    malformed_json.write_text('{"points": ')
    malformed_yaml.write_text('points: [\n')
    for command in COMMANDS:
        table += [([typo], 'did you mean') for typo in typos(command)]
    for action in SERVO_ACTIONS:
        table += [(['servo', typo], 'did you mean') for typo in typos(action)]
    for action in PROGRAM_ACTIONS:
        table += [(['program', typo], 'did you mean') for typo in typos(action)]
    for prefix, (arguments, options) in VALID.items():
        for option in options:
            table += [([*prefix, *arguments, typo], 'did you mean')
                      for typo in typos(option) if typo not in options]
        table.append(([*prefix, *arguments, '--no-such-option'], 'unrecognized option'))
    for before, option, values in NUMBERS:
        for value in values:
            table.append(([*before, option, value] if option else [*before, value, 'joint51'],
                          None))
    for before in WITH_NAMESPACE:
        table += [([*before, '--namespace', bad], 'namespace') for bad in BAD_NAMESPACES]
    table += [(argv, None) for argv in MISSING]
    for name in BAD_NAMES:
        for command in (['play'], ['show'], ['delete'], ['retime']):
            table.append(([*command, name], 'name'))
        table.append((['save', name, '--last'], 'name'))
    garbage = tmp / 'garbage.yaml'
    garbage.write_text('a: [1, 2\nb: : :\n', encoding='utf-8')
    binary = tmp / 'binary.txt'
    binary.write_bytes(b'\xff\xfe\x00\x81 MOVJ')
    misspelt = tmp / 'misspelt_motion.yaml'
    misspelt.write_text('sweetie_motion:\n  robot: sweetie_bot.yaml\n  perod: 0.01\n',
                        encoding='utf-8')
    folder = tmp / 'a_folder'
    folder.mkdir(exist_ok=True)
    for path, text in ((tmp / 'nosuch.yaml', 'no such file'), (garbage, str(garbage)),
                       (folder, str(folder))):
        table += [
            (['describe', '--robot', str(path)], text),
            (['bringup', '--config', str(path)], text),
            (['servo-sim', '--servos', str(path)], text),
            (['program', 'from-path', str(path)], text),
            (['console', '--config', str(path)], text),
            (['save', 'x', '--file', str(path)], text),
            (['retime', 'nod', '--robot', str(path)], None),
        ]
    for path, text in ((tmp / 'nosuch.txt', 'no such file'), (binary, str(binary)),
                       (folder, str(folder))):
        for action in ('check', 'plot', 'run'):
            table.append((['program', action, str(path)], text))
    table += [
        (['bringup', '--config', str(misspelt)], "did you mean 'period'"),
        (['bringup', '--config', 'sweetie_bot_moton.yaml'], 'did you mean'),
        (['bringup', '--bus', 'serail'], "did you mean 'serial'"),
        (['bringup', '--robot-description', 'topc'], "did you mean 'topic'"),
        (['program', 'check', 'paper_pth.txt'], "did you mean 'programs/paper_path.txt'"),
        (['program', 'check', 'programs/paper_path.txt', '--chain', 'amr'],
         "did you mean 'arm'"),
        (['program', 'check', 'programs/paper_path.txt', '--robot', 'winding_arn.yaml'],
         'did you mean'),
        (['retime', 'nod', '--interpolation', 'akma'], "did you mean 'akima'"),
        (['import', '--dir', '/proc/nope', 'f.json'], '/proc/nope'),
        (['import', '--name', 'x', 'a.json', 'b.json'], 'one file'),
        # a file to import that is missing or malformed: bad input, said before any waiting
        (['import', str(tmp / 'nosuch.json')], f'{tmp / "nosuch.json"}: no such file'),
        (['import', str(tmp / 'nosuch.yaml'), '--dir', str(tmp / 'out')], 'no such file'),
        (['import', str(malformed_json)], f'{malformed_json}:1:12: not JSON'),
        (['import', str(malformed_yaml)], f'{malformed_yaml}:2:1: '),
        (['servo', 'read', 'torque_polcy'], "did you mean 'torque_policy'"),
        (['servo', 'write', 'absolute_position', '5', 'joint51'], 'read-only'),
        (['servo', 'torque', 'of'], "did you mean 'off'"),
        (['servo', 'identify', '--servos', 'joint51'], 'unrecognized option'),
        (['servo-sim', '--servos', 'sweetie_bot_servo.yaml'], 'did you mean'),
        (['console', '--with-robot', '--namespace', 'x', '--robot', 'winding_arm.yaml'],
         '--config'),
    ]
    return table


def run(argv: List[str], capsys) -> Tuple[int, str, str]:
    """Run the entry point as the shell would; return (exit status, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as ended:
        code = ended.code
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_covers_a_few_hundred_mistakes(tmp_path):
    assert len(cases(tmp_path)) >= 300


def test_every_mistake_is_one_line_with_a_hint_and_exit_2(tmp_path, capsys, monkeypatch):
    # nothing may wait for a motion process: a case that would is a bug of its own
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    monkeypatch.chdir(tmp_path)
    wrong = []
    for argv, text in cases(tmp_path):
        code, out, err = run(argv, capsys)
        lines = err.strip().splitlines()
        fine = (code == 2 and len(lines) == 1 and 'Traceback' not in err and not out.strip()
                and lines[0].startswith('sweetie-motion')
                and (text is None or text in lines[0]))
        if not fine:
            wrong.append(f'{argv}: exit {code}, stdout {out[:200]!r}, stderr {err[:400]!r}')
    assert not wrong, f'{len(wrong)} mistakes not reported as one line:\n' + '\n'.join(wrong)


def test_import_says_every_unreadable_file_one_line_each_and_imports_none(tmp_path, capsys):
    good = Path(__file__).resolve().parents[1] / 'data' / 'sweetie_movements' / 'bow_begin.json'
    bad = tmp_path / 'bad.json'
    bad.write_text('[')
    code, out, err = run(['import', str(tmp_path / 'gone.json'), str(good), str(bad),
                          '--dir', str(tmp_path / 'out')], capsys)
    assert code == 2 and not out, out
    assert err.strip().splitlines() == [
        f'sweetie-motion import: {tmp_path / "gone.json"}: no such file',
        f'sweetie-motion import: {bad}:1:2: not JSON: Expecting value'], err
    assert not (tmp_path / 'out').exists() or not list((tmp_path / 'out').iterdir())


def test_a_mistake_after_a_subcommand_names_that_subcommand(capsys):
    code, _, err = run(['play', 'nod', '--sped', '2'], capsys)
    assert code == 2
    assert err.startswith('sweetie-motion play: unrecognized option --sped '
                          "(did you mean '--speed'?)")
    assert 'sweetie-motion play --help' in err


def test_every_help_is_plain_words_with_the_defaults(capsys):
    prefixes = [[c] for c in COMMANDS] + [['servo', a] for a in SERVO_ACTIONS] + \
        [['program', a] for a in PROGRAM_ACTIONS] + [[]]
    for prefix in prefixes:
        code, out, err = run([*prefix, '--help'], capsys)
        assert code == 0 and not err, (prefix, err)
        for markup in ('``', ':param', ':class:', 'R-', '(seed'):
            assert markup not in out, (prefix, markup)
    _, out, _ = run(['list', '--help'], capsys)
    words = ' '.join(out.split())
    assert '(default: 15.0)' in words and '(default: sweetie_bot)' in words
    _, out, _ = run(['bringup', '--help'], capsys)
    assert 'three processes' in out
    _, out, _ = run(['servo', 'status', '--help'], capsys)
    assert '--namespace' in out and '--timeout' in out


def test_options_come_after_the_action_everywhere(capsys):
    # the servo actions take the options every other command takes after it
    code, _, err = run(['servo', '--namespace', 'x', 'status'], capsys)
    assert code == 2 and 'sweetie-motion servo' in err
    code, _, err = run(['servo', 'identify', '--joints'], capsys)
    assert code == 2 and 'expected at least one argument' in err
