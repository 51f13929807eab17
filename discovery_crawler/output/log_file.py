"""Lines for ``LOG_FILE`` written before Scrapy's logging is set up.

A run refused before it starts (a bad argument, an output that cannot be written) says so
in one line on stderr. Under Scrapyd stderr goes to Scrapyd's own log, and the job's log
(its ``LOG_FILE``, at ``log_url``) would not exist: so the line goes there too, in Scrapy's
log format, followed by the outcome in the form the stats dump of a run gives it
(``'discovery/outcome': …``), so a monitor reads every job's outcome the same way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

LOGGER_NAME = "discovery_crawler.commands.crawl"  # the command that refuses
OUTCOME_STAT = "discovery/outcome"


def refusal_lines(settings: Any, line: str, outcome: str, status: int) -> str:
    """The refusal and its outcome as two log lines in the settings' log format."""
    formatter = logging.Formatter(settings.get("LOG_FORMAT"), settings.get("LOG_DATEFORMAT"))

    def formatted(level: int, message: str) -> str:
        record = logging.LogRecord(LOGGER_NAME, level, "", 0, message, None, None)
        return formatter.format(record)

    return "\n".join(
        [
            formatted(logging.ERROR, line),
            formatted(
                logging.INFO,
                f"The run did not start (exit status {status}): { ({OUTCOME_STAT: outcome})!r}",
            ),
            "",
        ]
    )


def log_refusal(settings: Any, line: str, outcome: str, status: int) -> None:
    """Append the refusal to ``LOG_FILE`` when one is set (else nothing: stderr has it).
    A log file that cannot be written is left: the line is on stderr already."""
    log_file = settings.get("LOG_FILE")
    if not log_file:
        return
    text = refusal_lines(settings, line, outcome, status)
    try:
        path = Path(log_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding=settings.get("LOG_ENCODING") or "utf-8") as file:
            file.write(text)
    except OSError:
        pass
