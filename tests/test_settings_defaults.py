"""A default repeated in code (``settings.getint("NAME", 1000)``) is the one ``settings.py``
has: a fallback that drifted would change a run only where the setting was unset (the
``estimate`` spider's URL rate once said 100,000 while settings.py and the docs said 50,000)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from discovery_crawler import settings as project_settings

PACKAGE = Path(project_settings.__file__).parent
GETTERS = {"get", "getint", "getfloat", "getbool"}


def repeated_defaults() -> list[tuple[str, str, object]]:
    """(where, setting, the literal default given) for every getter call with one."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in GETTERS
                and "settings" in ast.unparse(node.func.value)
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value.isupper()
            ):
                continue
            try:
                default = ast.literal_eval(node.args[1])
            except ValueError:
                continue  # a computed fallback: nothing to compare
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            found.append((where, node.args[0].value, default))
    return found


CALLS = [c for c in repeated_defaults() if hasattr(project_settings, c[1])]


def test_the_scan_finds_calls():
    assert len(CALLS) > 20


@pytest.mark.parametrize(("where", "name", "default"), CALLS, ids=lambda v: str(v))
def test_a_repeated_default_is_the_settings_default(where: str, name: str, default: object):
    assert default == getattr(project_settings, name), (
        f"{where}: {name} falls back to {default!r}, settings.py says "
        f"{getattr(project_settings, name)!r}"
    )
