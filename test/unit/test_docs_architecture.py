"""
docs/architecture.md is true of the code: what it names exists, and its map lists every module.

A newcomer reads the layout and the walk of a goal before the code; a file renamed or a class
gone leaves the page lying (issue #36: of 12 statements checked, 4 were wrong and 8 of the
editor's modules missing from its list).
"""

from pathlib import Path
import re

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / 'sweetie_motion'
PAGE = ROOT / 'docs' / 'architecture.md'


def sources():
    """Return {path: text} of the package's and the tests' Python files."""
    files = list(PACKAGE.rglob('*.py')) + list((ROOT / 'test').rglob('*.py')) + \
        list((ROOT / 'bench').rglob('*.py'))
    return {path: path.read_text(encoding='utf-8') for path in files}


def layout_blocks(text):
    """Return {folder: its text} of the package map (the first code block after the package)."""
    block = text[text.index('```\nsweetie_motion/\n') + 4:]
    block = block[:block.index('```')]
    folders, current = {}, None
    for line in block.splitlines():
        start = re.match(r'^  (\w+)/\s', line)
        if start:
            current = start.group(1)
            folders[current] = line[len(start.group(0)):]
        elif re.match(r'^\S', line) or re.match(r'^  \w+\.py', line):
            current = None
        elif current is not None:
            folders[current] += ' ' + line.strip()
    return folders


def test_every_module_of_a_folder_is_on_the_map_and_every_name_there_exists():
    folders = layout_blocks(PAGE.read_text(encoding='utf-8'))
    assert {'model', 'core', 'host', 'trajectory', 'controllers', 'servo', 'checks',
            'physics', 'storage', 'nodes', 'editor', 'console', 'ros'} <= set(folders)
    missing, stale = [], []
    for folder, words in folders.items():
        named = set(re.findall(r'(\w+)\.py', words))
        present = {p.stem for p in (PACKAGE / folder).glob('*.py') if p.stem != '__init__'}
        missing += [f'{folder}/{m}.py' for m in sorted(present - named)]
        stale += [f'{folder}/{s}.py' for s in sorted(named - present)
                  if not list((PACKAGE / folder).rglob(f'{s}.py'))]
    assert not missing, f'modules the map of docs/architecture.md does not list: {missing}'
    assert not stale, f'modules docs/architecture.md names that do not exist: {stale}'


def named(text):
    """Return the code spans of the page."""
    return sorted(set(re.findall(r'`([^`\n]+)`', text)))


@pytest.fixture(scope='module')
def code():
    return sources()


def test_every_file_class_and_method_the_page_names_exists(code):
    text = PAGE.read_text(encoding='utf-8')
    wrong = []
    for span in named(text):
        for path in re.findall(r'([\w./]+\.py)\b', span):
            if not any(str(p).endswith('/' + path) for p in code) and \
                    not (ROOT / path).exists():
                wrong.append(f'file {path}')
        symbol = re.fullmatch(r'([A-Z]\w+)(?:\.(\w+))?(?:\(.*\))?', span)
        if not symbol:
            continue
        name, member = symbol.groups()
        if name.isupper():   # a constant: defined somewhere
            if not any(re.search(rf'^\s*{name}\b\s*[:=]', t, re.M) for t in code.values()):
                wrong.append(f'constant {name}')
            continue
        files = [p for p, t in code.items() if re.search(rf'^\s*class {name}\b', t, re.M)]
        if not files:
            wrong.append(f'class {name}')
        elif member and not any(re.search(rf'(def {member}\b|\b{member}\s*[:=])', code[p])
                                for p in files):
            wrong.append(f'{name}.{member}')
    assert not wrong, f'docs/architecture.md names what the code does not have: {wrong}'


def walk_steps(text):
    """Return [(file, text)] of the numbered steps of the walk of a goal, in order."""
    section = text[text.index('## From a goal to the servos'):]
    section = section[:section.index('\n**')]   # the walk ends at the next bold paragraph
    steps = re.findall(r'^\d+\. `([\w/]+\.py)`(.*?)(?=^\d+\. |\Z)', section, re.M | re.S)
    return [(path, body) for path, body in steps]


def defined(name, text):
    """Return whether ``text`` defines ``name`` (class, function, method or assignment)."""
    return re.search(rf'^\s*(class|def|async def)\s+{name}\b|^\s*{name}\b\s*[:=]', text,
                     re.M) is not None


def test_the_walk_of_a_goal_names_at_most_twelve_files_each_with_what_it_says(code):
    text = PAGE.read_text(encoding='utf-8')
    steps = walk_steps(text)
    section = text[text.index('## From a goal to the servos'):]
    section = section[:section.index('\n**')]
    files = set(re.findall(r'`([\w/]+\.py)`', section))
    assert len(steps) >= 8 and len(files) <= 12, files
    by_path = {str(p.relative_to(PACKAGE)): t for p, t in code.items()
               if p.is_relative_to(PACKAGE)}
    wrong = []
    for path, body in steps:
        source = by_path.get(path)
        if source is None:
            wrong.append(f'file {path}')
            continue
        for span in named(body):
            if re.fullmatch(r'_?[a-z]\w*', span):
                # a function or method of the step: defined in its file, or imported there
                if not defined(span, source) and not (
                        re.search(rf'^from [\w.]+ import \(?[^)]*?\b{span}\b', source, re.M)
                        and any(defined(span, t) for t in by_path.values())):
                    wrong.append(f'{path}: {span}')
            member = re.fullmatch(r'([A-Z]\w+)\.(_?\w+)', span)
            if member:
                homes = [t for t in by_path.values() if defined(member.group(1), t)]
                if not any(defined(member.group(2), t) for t in homes):
                    wrong.append(f'{path}: {span}')
    assert not wrong, f'the walk of a goal names what its files do not have: {wrong}'
