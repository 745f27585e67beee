"""
Classes and functions a person can hold in their head (issue 36).

No class of the package is longer than :data:`CLASS_LINES` lines and no function longer than
:data:`FUNCTION_LINES`, docstrings not counted (they explain; they do not add to what a reader
must follow). A longer one is split by responsibility, each part named for its job.
"""

import ast
from pathlib import Path
from typing import List, Tuple

PACKAGE = Path(__file__).resolve().parents[2] / 'sweetie_motion'
CLASS_LINES = 400
FUNCTION_LINES = 60


def _docstring_lines(node: ast.AST) -> int:
    body = getattr(node, 'body', [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].end_lineno - body[0].lineno + 1
    return 0


def _length(node: ast.AST) -> int:
    """Return a definition's lines without its docstring and its nested definitions' ones."""
    docstrings = sum(_docstring_lines(inner) for inner in ast.walk(node)
                     if isinstance(inner, (ast.ClassDef, ast.FunctionDef,
                                           ast.AsyncFunctionDef)))
    return node.end_lineno - node.lineno + 1 - docstrings


def oversized() -> Tuple[List[str], List[str]]:
    """Return the classes and the functions over their limits: 'path:line name (lines)'."""
    classes, functions = [], []
    for path in sorted(PACKAGE.rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'), str(path))
        for node in ast.walk(tree):
            where = f'{path.relative_to(PACKAGE.parent)}:{getattr(node, "lineno", 0)}'
            if isinstance(node, ast.ClassDef) and _length(node) > CLASS_LINES:
                classes.append(f'{where} {node.name} ({_length(node)})')
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and _length(node) > FUNCTION_LINES:
                functions.append(f'{where} {node.name} ({_length(node)})')
    return classes, functions


def test_no_class_is_longer_than_400_lines_and_no_function_than_60():
    classes, functions = oversized()
    assert not classes and not functions, '\n'.join(classes + functions)


def test_the_count_leaves_docstrings_out_and_sees_a_long_function():
    source = 'def f():\n    """Doc\n    string."""\n' + '    x = 1\n' * 61
    node = ast.parse(source).body[0]
    assert _length(node) == 62
