"""The C extensions (``setup.py``), imported in one place.

Each is optional: where one was not built (no C compiler at install) its user runs the
same work in Python, and a crawl says so in one line (``fallback_line``).

An egg (``scrapyd-deploy`` runs ``setup.py bdist_egg``) holds each extension beside a
stub ``.py`` that extracts it and loads it. Scrapyd puts the egg on ``sys.path`` as a zip,
where the stub's ``importlib.resources.files(__name__)`` raises ``TypeError`` on Python
3.11 (a module is not a package; 3.12 takes its package). So the extension is extracted
here as the stub means to, from its package's files, and loaded: a Scrapyd job runs the C
code too.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.resources
import importlib.util
import sys
from types import ModuleType

# setup.py's EXTENSIONS (tests/test_compiled.py holds the two lists equal)
EXTENSIONS = (
    "discovery_crawler.urls._seen_table",
    "discovery_crawler.urls._plain_bases",
    "discovery_crawler.urls._known_origins",
    "discovery_crawler.urls._screens",
    "discovery_crawler.output._lines",
    "discovery_crawler.selection._paths",
    "discovery_crawler.selection._rater",
    "discovery_crawler.sitemaps._tails",
    "discovery_crawler.sitemaps._records",
    "discovery_crawler.sitemaps._windows",
)
# What the Python path costs: a generated index of 20 × 50,000 URLs, profile default, on
# 2 vCPU: 10.0 s (6.2 s CPU) with the extensions, 30.5 s (15.1 s CPU) without.
PYTHON_PATH_COST = "a sitemap walk takes about 3× as long (1M URLs: 30 s instead of 10 s)"

_missing: dict[str, str] = {}  # extension → why it is not there
_extracted: list[str] = []  # extensions loaded from a zipped egg's files


def extension(name: str) -> ModuleType | None:
    """The C extension ``name``, or None: not built, so its user runs the Python code."""
    if name in sys.modules:
        return sys.modules[name]
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        why = str(exc)
    except TypeError:  # bdist_egg's stub inside a zipped egg (Python 3.11)
        try:
            module = _load_from_package_files(name)
        except (ImportError, OSError) as exc:
            why = str(exc)
        else:
            _extracted.append(name)
            return module
    _missing[name] = why
    return None


def _load_from_package_files(name: str) -> ModuleType:
    """Load the extension's shared library from its package's files (a zip: extracted to
    a temporary file for the dynamic loader, removed once loaded)."""
    package, _, stem = name.rpartition(".")
    files = importlib.resources.files(package)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        resource = files.joinpath(stem + suffix)
        if resource.is_file():
            break
    else:
        raise ImportError(f"no shared library of {name} in {package}")
    with importlib.resources.as_file(resource) as path:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{name}: {path} is no extension module")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    sys.modules[name] = module
    setattr(sys.modules[package], stem, module)
    return module


def missing() -> dict[str, str]:
    """Every extension that is not there (each tried now), and why."""
    for name in EXTENSIONS:
        if name not in _missing:
            extension(name)
    return dict(_missing)


def extracted_line() -> str | None:
    """One line saying the C extensions came out of a zipped egg (None: not an egg)."""
    if not _extracted:
        return None
    return f"C speed-ups: {len(_extracted)} extensions loaded from the zipped egg"


def fallback_line() -> str | None:
    """One line saying that the Python path runs, and what it costs (None: all C)."""
    absent = missing()
    if not absent:
        return None
    names = (
        f"all {len(absent)}"
        if len(absent) == len(EXTENSIONS)
        else ", ".join(name.rpartition(".")[2] for name in absent)
    )
    why = next(iter(absent.values()))
    return (
        f"C speed-ups not available ({names}: {why}): the same work runs in Python, "
        f"{PYTHON_PATH_COST}"
    )
