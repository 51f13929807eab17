"""A pipeline stage for tests: it moves some URLs of every sitemap batch elsewhere on the
site, as any stage that changes a record's URL would (a canonical, a redirect), so the
tests can check that nothing worked out for the old URL stands for the new one."""

from __future__ import annotations

from typing import Any


class MoveSomeUrls:
    """Every 7th record of a sitemap batch (from its 4th) moves to ``/moved-…``."""

    def process_item(self, item: Any) -> Any:
        for i, rec in enumerate(getattr(item, "records", None) or ()):
            if i % 7 == 3 and rec["source"] == "sitemap" and "/section-" in rec["url"]:
                rec["url"] = rec["url"].replace("/section-", "/moved-", 1)
        return item
