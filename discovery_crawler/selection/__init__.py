"""Scoring and selection under a cap (SPEC §8): pure functions and a streaming selector,
no Scrapy. ``pipelines/score.py`` runs them on every batch."""

from discovery_crawler.selection.checklist import CHECKLIST, PageType, page_type
from discovery_crawler.selection.scoring import RULES, Rater, Scored, score_record, score_url
from discovery_crawler.selection.selector import Selection, SelectionPlan, Selector, plan_selection
from discovery_crawler.selection.summary import selection_lines

__all__ = [
    "CHECKLIST",
    "RULES",
    "PageType",
    "Rater",
    "Scored",
    "Selection",
    "SelectionPlan",
    "Selector",
    "page_type",
    "plan_selection",
    "score_record",
    "score_url",
    "selection_lines",
]
