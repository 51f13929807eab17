"""Scrapy's "Stored jsonl feed (1 items) in: inventory.jsonl" said in URLs.

Scrapy's ``FeedExporter`` counts the items it hands an exporter, and here an item is a
batch of URLs (``UrlBatch``): a 165-URL site is one item. The line is logged by Scrapy from
a private method with no hook, so the words are changed where a log record can be changed:
a ``logging.Filter`` on Scrapy's feed-export logger. Each of the project's exporters tells
it, as it finishes, how many URLs and batches it wrote to which file; the filter rewrites
the matching record to ``Stored jsonl feed (165 URLs in 1 batch) in: inventory.jsonl``.
A feed it was not told of (another exporter, stdout) keeps Scrapy's words.
"""

from __future__ import annotations

import logging
import re

FEED_LOGGER = "scrapy.extensions.feedexport"
_ITEMS = re.compile(r" feed \((\d+) items\) in: ")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "es" if word.endswith("ch") else "s")


class FeedCountWords(logging.Filter):
    """Rewrites Scrapy's "Stored … feed (N items)" to the URLs written in those N batches."""

    def __init__(self) -> None:
        super().__init__()
        self.written: dict[str, tuple[int, int]] = {}  # file name → (URLs, batches)

    def finished(self, name: str, urls: int, batches: int) -> None:
        """An exporter wrote ``urls`` URLs in ``batches`` batches to the file ``name``."""
        self.written[str(name)] = (urls, batches)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.written or not isinstance(record.args, tuple) or len(record.args) != 1:
            return True
        text = record.args[0]
        if not isinstance(text, str) or not (match := _ITEMS.search(text)):
            return True
        uri = text[match.end() :]
        for name, (urls, batches) in self.written.items():
            if uri == name or (uri.startswith("file:") and uri.endswith(name)):
                words = f" feed ({_plural(urls, 'URL')} in {_plural(batches, 'batch')}) in: "
                record.args = (text[: match.start()] + words + text[match.end() :],)
                break
        return True


_FILTER = FeedCountWords()


def feed_count_words() -> FeedCountWords:
    """The process's filter, on Scrapy's feed-export logger (added once)."""
    logger = logging.getLogger(FEED_LOGGER)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return _FILTER
