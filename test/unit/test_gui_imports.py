"""
The windows' folders: editor/ and console/ share gui/, never each other; presenters are Qt-free.

Every import is looked at, at module and at function level (issue #36: the editor borrowed
the console's robot view, the console eight names of the editor's folder).
"""

import ast
from pathlib import Path
import subprocess
import sys
from typing import Iterator, Tuple

PACKAGE = Path(__file__).resolve().parents[2] / 'sweetie_motion'


def imports(path: Path) -> Iterator[Tuple[int, str]]:
    """Yield (line, module) of every import of a file of the package, at any level."""
    package = '.'.join(path.relative_to(PACKAGE.parent).parts[:-1])
    return imports_in(path.read_text(encoding='utf-8'), package)


def imports_in(text: str, package: str) -> Iterator[Tuple[int, str]]:
    """Yield (line, module) of every import of ``text`` (relative ones from ``package``)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parent = package.rsplit('.', node.level - 1)[0] if node.level > 1 else package
                base = f'{parent}.{base}' if base else parent
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f'{base}.{alias.name}'


def offending(folder: str, banned: Tuple[str, ...]) -> list:
    """Return 'file:line module' of each import of ``folder``'s files under ``banned``."""
    found = []
    for path in sorted((PACKAGE / folder).rglob('*.py')):
        for line, module in imports(path):
            if module in banned or module.startswith(tuple(b + '.' for b in banned)):
                found.append(f'{path.relative_to(PACKAGE)}:{line} {module}')
    return found


def test_the_editor_and_the_console_never_import_each_other():
    assert offending('editor', ('sweetie_motion.console',)) == []
    assert offending('console', ('sweetie_motion.editor',)) == []


def test_the_gui_kit_imports_neither_window():
    assert list((PACKAGE / 'gui').glob('*.py'))
    assert offending('gui', ('sweetie_motion.editor', 'sweetie_motion.console')) == []


def test_the_presenters_import_neither_qt_nor_rclpy():
    banned = ('PyQt5', 'rclpy')
    for presenter in ('editor/presenter.py', 'console/presenter.py'):
        path = PACKAGE / presenter
        assert [f'{presenter}:{line} {m}' for line, m in imports(path)
                if m in banned or m.startswith(tuple(b + '.' for b in banned))] == []


def test_the_presenters_load_without_qt_and_rclpy():
    probe = (
        'import sys\n'
        'class Block:\n'
        '    def find_spec(self, name, path=None, target=None):\n'
        '        if name.split(".")[0] in ("PyQt5", "rclpy"):\n'
        '            raise ImportError(name)\n'
        'sys.meta_path.insert(0, Block())\n'
        'import sweetie_motion.editor.presenter, sweetie_motion.console.presenter\n')
    result = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def test_imports_at_function_level_and_relative_ones_are_seen():
    text = 'def f():\n    from sweetie_motion.console import views\nfrom . import x\n'
    found = [m for _, m in imports_in(text, 'sweetie_motion.gui')]
    assert 'sweetie_motion.console.views' in found and 'sweetie_motion.gui.x' in found
