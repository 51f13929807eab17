"""The documentation is checked against the code and run: README.md and docs/*.md.

- ``docs/settings.md`` has a row for every setting ``settings.py`` defines, a profile sets
  or the code reads (``settings.get*("NAME")``), and every row's default and profile values
  are the code's: the reference cannot drift from ``settings.py``.
- Every fenced block runs: ``sh`` blocks as one bash script each (``set -e``) in a fresh
  folder, ``pycon`` blocks as doctests (their output compared), ``python`` blocks exec'd.
  They run against ``tests/fixtures/docs_site`` served on 127.0.0.1 (its README): the
  docs' ``https://example.com`` is that server's origin (``discovery/example.com``, the
  default out folder, follows), and each crawl is given ``HOST_INTERVAL=0`` and the server
  allow-listed for the SSRF guard, so the docs' commands run as written, only faster. A
  block that cannot run in a test (a crontab line, the test suite itself) is marked
  ``<!-- not run: why -->`` on the line before it (``<!-- exits N -->``: its script ends with
  status N, as a bounded chunk's 6); any other language is text, and the
  languages are checked so a command cannot hide behind an unknown one. A text block
  marked ``<!-- output of the block above -->`` is what the shell block before it prints.

``docs/_incoming/`` (helpers' drafts, merged by the lead) is not checked.
"""

from __future__ import annotations

import ast
import doctest
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import default_settings as scrapy_defaults

import discovery_crawler.settings as project_settings
from discovery_crawler import api
from discovery_crawler.arguments import default_out_dir
from discovery_crawler.extensions.run import RUN_SETTING
from discovery_crawler.profiles import available_profiles, load_profile
from discovery_crawler.site_server import SiteServer

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(p for p in (ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
SITE = Path(__file__).resolve().parent / "fixtures" / "docs_site" / "site"
EXAMPLE = "https://example.com"
EXAMPLE_OUT = "discovery/example.com"

RUN_LANGUAGES = {"sh", "pycon", "python"}
TEXT_LANGUAGES = {"text", "json", "csv"}
NOT_RUN = re.compile(r"^<!-- not run: \S.* -->$")
EXITS = re.compile(r"^<!-- exits (\d+) -->$")
OUTPUT = "<!-- output of the block above -->"


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    not_run: str | None  # the marker's reason
    exits: int = 0  # the status the block's script ends with (<!-- exits N -->)
    output: str | None = None  # what it prints (the text block marked as its output)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page (fences may be indented, in a list item)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = re.match(r"^( *)```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, language = len(m.group(1)), m.group(2).strip()
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"{page.name}:{i + 1}: a fence that is never closed"
        body = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = before[len("<!-- not run: ") : -len(" -->")] if NOT_RUN.match(before) else None
        exits = int(EXITS.match(before).group(1)) if EXITS.match(before) else 0
        if before == OUTPUT:
            assert blocks and blocks[-1].language == "sh", (
                f"{page.name}:{i + 1}: output of no command"
            )
            blocks[-1].output = body
        blocks.append(Block(page, i + 1, language, body, marker, exits))
        i = end + 1
    return blocks


BLOCKS = [b for page in PAGES for b in fenced_blocks(page)]
RUNNABLE = [b for b in BLOCKS if b.language in RUN_LANGUAGES and b.not_run is None]


# -- the blocks' shape -----------------------------------------------------------------------
def test_every_block_names_a_known_language():
    unknown = [
        f"{b.id}: ```{b.language}"
        for b in BLOCKS
        if b.language not in RUN_LANGUAGES | TEXT_LANGUAGES
    ]
    assert not unknown, (
        f"give each block one of {sorted(RUN_LANGUAGES | TEXT_LANGUAGES)}: {unknown}"
    )


def test_only_runnable_blocks_are_marked_not_run():
    wrong = [b.id for b in BLOCKS if b.not_run is not None and b.language not in RUN_LANGUAGES]
    assert not wrong, f"a text block needs no <!-- not run --> marker: {wrong}"


def test_no_command_hides_in_an_indented_block():
    """A command or code written as an indented block would escape the run below."""
    code = re.compile(r"^ {4,}(\$ |>>> )?(scrapy |python |scripts/|\.venv/|from \w|import \w)")
    found = []
    for page in PAGES:
        inside = False
        for n, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
            if re.match(r"^ *```", line):
                inside = not inside
            elif not inside and code.match(line):
                found.append(f"{page.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, f"fence these (```sh / ```pycon) so they run: {found}"


def test_the_docs_have_runnable_examples():
    pages = {b.page.name for b in RUNNABLE}
    assert {"README.md", "usage.md", "outputs.md", "operations.md", "api.md"} <= pages


def test_each_doc_opens_with_its_table_of_contents():
    """Every page under docs/ lists its sections, in order, before the first of them."""
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        headings = [h for h in re.findall(r"^## (.+)$", text, re.M) if not h.startswith("Contents")]
        first = text.index("\n## ")
        toc = re.findall(r"^- \[(.+?)\]\(#([^)]+)\)$", text[:first], re.M)
        assert [t for t, _ in toc] == headings, page.name
        for title, anchor in toc:
            assert anchor == anchor_of(title), (page.name, title, anchor)


def anchor_of(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def test_links_between_the_docs_resolve():
    broken = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"https?://", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and file.suffix == ".md":
                titles = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
                if anchor not in {anchor_of(t) for t in titles}:
                    broken.append(f"{page.name}: {target}")
    assert not broken, broken


# -- the settings reference ------------------------------------------------------------------
def settings_rows() -> dict[str, list[str]]:
    """``NAME`` → its row's cells, from every table of docs/settings.md."""
    rows: dict[str, list[str]] = {}
    for line in (ROOT / "docs" / "settings.md").read_text(encoding="utf-8").split("\n"):
        m = re.match(r"^\| `([A-Z][A-Z0-9_]+)` \|(.*)\|$", line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)}: two rows"
            rows[m.group(1)] = [c.strip() for c in m.group(2).split(" | ")]
    return rows


def project_defaults() -> dict[str, Any]:
    return {n: getattr(project_settings, n) for n in dir(project_settings) if n.isupper()}


def settings_read_in_code() -> set[str]:
    pattern = re.compile(r"settings(?:\.get\w*\(|\[)\s*[\"']([A-Z][A-Z0-9_]+)[\"']")
    names = {RUN_SETTING}
    for path in (ROOT / "discovery_crawler").rglob("*.py"):
        names.update(pattern.findall(path.read_text(encoding="utf-8")))
    return names


def literal(cell: str) -> Any:
    """The Python value a cell's first backticked literal says."""
    m = re.match(r"^`([^`]+)`", cell)
    assert m, f"no `literal` at the start of {cell!r}"
    return ast.literal_eval(m.group(1))


def last_part(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def test_every_setting_has_a_row():
    names = set(project_defaults()) | settings_read_in_code()
    for profile in available_profiles():
        names |= set(load_profile(profile))
    missing = sorted(names - set(settings_rows()))
    assert not missing, f"docs/settings.md has no row for {missing}"


def test_every_row_has_the_codes_default():
    """A row's default is settings.py's value; for a setting the project leaves alone,
    Scrapy's; a component table names each component; internal settings have none."""
    ours, internal = project_defaults(), settings_read_in_code()
    for name, (default, *_rest) in settings_rows().items():
        if name in ours:
            value = ours[name]
        elif hasattr(scrapy_defaults, name):
            value = getattr(scrapy_defaults, name)
        else:
            assert name in internal, f"{name}: no such setting in settings.py, Scrapy or the code"
            assert default == "—", f"{name}: an internal setting has no default ({default!r})"
            continue
        if name == "EXTENSIONS_BASE":  # Scrapy's, less the ones settings.py leaves out
            dropped = set(scrapy_defaults.EXTENSIONS_BASE) - set(value)
            assert dropped and all(f"`{last_part(d)}`" in default for d in dropped), name
        elif isinstance(value, dict) and value and name not in ("HOST_INTERVAL_OVERRIDES",):
            parts = {last_part(str(k)) for k in value if k} | {
                last_part(v) for v in value.values() if isinstance(v, str)
            }
            absent = [p for p in parts if f"`{p}`" not in default]
            assert not absent, f"{name}: the row does not name {absent}"
        else:
            assert literal(default) == value, f"{name}: docs say {default!r}, code has {value!r}"


def test_every_row_names_the_profiles_that_change_it():
    """The profiles column names each profile that sets another value than the default,
    with that value, and no profile that does not set the value it names."""
    ours = project_defaults()
    profiles = {p: load_profile(p) for p in available_profiles()}
    for name, cells in settings_rows().items():
        base = ours.get(name, getattr(scrapy_defaults, name, None))
        said = {p: ast.literal_eval(v) for p, v in re.findall(r"`(\w+)`: `([^`]+)`", cells[1])}
        for p, v in said.items():
            assert profiles.get(p, {}).get(name, ...) == v, (
                f"{name}: profile {p} does not set {v!r}"
            )
        changed = {p for p, values in profiles.items() if values.get(name, base) != base}
        assert changed <= set(said), f"{name}: profiles {sorted(changed - set(said))} unnamed"


# -- the examples run ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site():
    server = SiteServer(SITE, rewrite=[EXAMPLE]).start()
    yield server
    server.stop()


def substitute(text: str, origin: str) -> str:
    out = str(default_out_dir(origin + "/"))
    return text.replace(EXAMPLE_OUT, out).replace(EXAMPLE, origin)


@pytest.fixture(scope="module")
def shell_env(site, tmp_path_factory) -> dict[str, str]:
    """PATH with a ``scrapy`` that adds the test's pacing and allow-list to each command,
    and the venv's ``python``; the project's settings found from any folder."""
    bin_dir = tmp_path_factory.mktemp("bin")
    scrapy = Path(sys.executable).with_name("scrapy")
    wrapper = bin_dir / "scrapy"
    wrapper.write_text(
        "#!/bin/sh\n"
        'command=$1; shift\nexec "' + str(scrapy) + '" "$command"'
        " -s HOST_INTERVAL=0 -s SSRF_ALLOWED_NETWORKS=127.0.0.1/32"
        f' -s SSRF_ALLOWED_PORTS=80,443,{site.port} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    (bin_dir / "python").symlink_to(sys.executable)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env["PATH"]])
    env["SCRAPY_SETTINGS_MODULE"] = "discovery_crawler.settings"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture
def paced_api(monkeypatch, site):
    """``discover()``'s child gets the same pacing and allow-list as the shell's scrapy."""
    command = api.command

    def paced(url: str, **kwargs: Any) -> list[str]:
        given = kwargs.pop("settings", None) or {}
        settings = {
            "HOST_INTERVAL": 0,
            "SSRF_ALLOWED_NETWORKS": ["127.0.0.1/32"],
            "SSRF_ALLOWED_PORTS": [80, 443, site.port],
            **given,
        }
        return command(url, settings=settings, **kwargs)

    monkeypatch.setattr(api, "command", paced)


SHELL = [b for b in RUNNABLE if b.language == "sh"]
PYTHON_PAGES = sorted({b.page for b in RUNNABLE if b.language != "sh"})


@pytest.mark.parametrize("block", SHELL, ids=lambda b: b.id)
def test_shell_example_runs(block: Block, site, shell_env, tmp_path):
    text = substitute(block.text, site.origin)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", text],
        cwd=tmp_path,
        env=shell_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == block.exits, (
        f"{block.id} exited {done.returncode}, not {block.exits}:\n{text}\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if block.output is not None:
        assert substitute(block.output, site.origin) in done.stdout, done.stdout[-3000:]


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(page: Path, site, paced_api, tmp_path, monkeypatch):
    """A page's Python blocks run in order in one namespace, as a reader types them into
    one session: ``pycon`` blocks as doctests, ``python`` blocks exec'd."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    ran = 0
    for block in (b for b in RUNNABLE if b.page == page and b.language != "sh"):
        text = substitute(block.text, site.origin)
        if block.language == "pycon":
            parser = doctest.DocTestParser()
            test = parser.get_doctest(text, namespace, block.id, str(page), block.line)
            flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
            runner = doctest.DocTestRunner(optionflags=flags)
            report: list[str] = []
            runner.run(test, out=report.append, clear_globs=False)
            namespace.update(test.globs)  # the doctest ran on a copy
            assert test.examples, f"{block.id}: a pycon block without >>> examples"
            assert runner.failures == 0, "".join(report)
        else:
            exec(compile(text, block.id, "exec"), namespace)
        ran += 1
    assert ran


def test_the_not_run_blocks_are_few():
    """What the docs cannot show running is the exception (a crontab line, the suite)."""
    marked = [b.id for b in BLOCKS if b.not_run is not None]
    assert len(marked) <= 10, marked  # + four Scrapyd requests, one Redis (live servers)
    assert shutil.which("bash"), "bash runs the docs' shell blocks"
