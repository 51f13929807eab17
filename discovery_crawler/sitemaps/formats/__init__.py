"""The sitemap formats: one reader per module of this package, each declared by its
``READER`` (a ``sitemaps.reading.Reader``), chosen once per document by ``choose``.

Every module here is a format's reader and is registered when the package is imported;
a reader from elsewhere (a plug-in, a test) is added with ``register``. Readers claim
documents from their head; ``choose`` gives every claimant, in order (``Reader.order``,
then name): the specific ones (the plain-urlset fast path) before the general ones that
read whatever they claim (XML, text).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from discovery_crawler.sitemaps.reading import Head, Reader

_readers: list[Reader] = []


def register(reader: Reader) -> Reader:
    """Add ``reader`` to those ``choose`` tries (its name not taken yet)."""
    if any(known.name == reader.name for known in _readers):
        raise ValueError(f"a sitemap reader named {reader.name!r} is registered already")
    _readers.append(reader)
    _readers.sort(key=lambda known: (known.order, known.name))
    return reader


def unregister(name: str) -> None:
    """Remove the reader named ``name``."""
    _readers[:] = [known for known in _readers if known.name != name]


def readers() -> tuple[Reader, ...]:
    """The registered readers, in the order their claims are tried."""
    return tuple(_readers)


def choose(head: Head) -> tuple[Reader, ...]:
    """The readers that claim the document whose head this is, the first to read it first
    (the next only if it declines)."""
    return tuple(reader for reader in _readers if reader.claims(head))


for _module in pkgutil.iter_modules(__path__):
    register(importlib.import_module(f"{__name__}.{_module.name}").READER)
