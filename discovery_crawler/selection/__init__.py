"""Scoring and selection under a cap (SPEC §8): pure functions and a streaming selector,
no Scrapy. ``pipelines/score.py`` runs them on every batch.

The names below are imported on first use (PEP 562), not with the package: the sitemap
worker process imports ``selection.scoring`` and ``selection.paths`` only, and the whole
package would needlessly swell its RSS."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "CHECKLIST": "checklist",
    "PageType": "checklist",
    "page_type": "checklist",
    "RULES": "scoring",
    "Rater": "scoring",
    "Scored": "scoring",
    "score_record": "scoring",
    "score_url": "scoring",
    "Selection": "selector",
    "SelectionPlan": "selector",
    "Selector": "selector",
    "plan_selection": "selector",
    "selection_lines": "summary",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
