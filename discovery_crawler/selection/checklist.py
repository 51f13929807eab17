"""The page-type checklist (SPEC §8, pass 1): which template a URL probably renders.

Selection covers distinct templates before it adds a second page of one, so each URL gets
one page type, inferred from its path, its sitemap hints (changefreq) and — when the page
was fetched and the record carries them — its ``title`` and ``links`` (number of links on
the page). It is a heuristic, cheap and explainable; the first rule that applies wins:

1. ``home`` — the root path.
2. ``form`` — a form-heavy page: a segment token such as contact, donate, signup/sign-up,
   register, subscribe, newsletter, apply, quote, booking, rsvp, join, feedback, checkout;
   or a fetched title saying so ("Contact us", "Donate", "Sign up").
3. ``data`` — a data/embed page: data, dataset(s), dashboard(s), map(s), chart(s), stats,
   statistics, embed, interactive, visualization, tracker, explorer, calculator, infographic.
4. ``listing`` — a listing or grid page: a last segment such as blog, news, articles,
   events, projects, gallery, portfolio, library, catalog, shop, topics, press; a page under
   tag/category/topic/author (``/blog/tag/python/``); a date-only archive (``/2023/06/``);
   a fetched title like "Blog", "Archive", "Category: …"; at least ``LISTING_LINKS`` links
   on a fetched page; or a shallow (≤ 2 segments) page the sitemap says changes
   hourly/daily/always.
5. ``pillar`` — an IA pillar: a one-segment page whose segment holds an IA-pillar keyword
   (one slot per keyword: ``/about``, ``/pricing``…), or any other one-segment page that is
   not a marker, a number, a utility page (privacy, terms, cookies…) or an article (a shared slot
   ``section``: the top sections of sites whose names are not in the keyword list).
6. ``article`` — long-form: a last segment of three words or more
   (``/how-we-ship-software/``), anything below a content section (blog, news, articles,
   posts, stories, insights, press, guides…), or a dated path with a slug
   (``/2023/06/launch/``).
7. ``subsection`` — a two-segment page with a short last segment (``/about/team/``,
   ``/services/consulting/``).
8. otherwise ``page`` (no checklist type).

Each type is one checklist *slot*, except ``pillar``: one slot per top section (per keyword,
plus the shared ``section`` slot), so the number of slots is bounded by the keyword list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from discovery_crawler.selection.paths import DEFAULT_KEYWORDS, PathFacts, is_marker, path_facts

# The checklist, in the order its slots are filled (SPEC §8).
CHECKLIST: tuple[str, ...] = (
    "home",
    "pillar",
    "article",
    "listing",
    "form",
    "data",
    "subsection",
)
GENERIC = "page"  # no checklist type
# Types that score the checklist bonus. home (+10) and pillar (+5) have their own rules,
# which is why /about scores 7 (SPEC §8), not 15.
BONUS_TYPES = frozenset({"article", "listing", "form", "data", "subsection"})
LISTING_LINKS = 60  # links on a fetched page that make it a listing/grid

FORM_WORDS = frozenset(
    {
        "contact",
        "donate",
        "donation",
        "donations",
        "signup",
        "register",
        "registration",
        "subscribe",
        "newsletter",
        "apply",
        "enquiry",
        "inquiry",
        "quote",
        "booking",
        "rsvp",
        "join",
        "feedback",
        "checkout",
    }
)
FORM_PHRASES = ("sign-up", "sign_up")
DATA_WORDS = frozenset(
    {
        "data",
        "dataset",
        "datasets",
        "dashboard",
        "dashboards",
        "map",
        "maps",
        "chart",
        "charts",
        "stats",
        "statistics",
        "embed",
        "embeds",
        "interactive",
        "visualization",
        "visualizations",
        "visualisation",
        "visualisations",
        "tracker",
        "explorer",
        "calculator",
        "infographic",
        "infographics",
    }
)
LISTING_WORDS = frozenset(
    {
        "blog",
        "news",
        "articles",
        "posts",
        "stories",
        "events",
        "projects",
        "resources",
        "library",
        "archive",
        "archives",
        "catalog",
        "catalogue",
        "shop",
        "store",
        "collections",
        "gallery",
        "galleries",
        "portfolio",
        "case-studies",
        "insights",
        "press",
        "newsroom",
        "publications",
        "podcasts",
        "videos",
        "webinars",
        "jobs",
        "topics",
        "categories",
        "tags",
        "authors",
        "directory",
    }
)
TAXONOMY_WORDS = frozenset(
    {"tag", "tags", "category", "categories", "topic", "topics", "author", "authors"}
)
CONTENT_SECTIONS = frozenset(
    {
        "blog",
        "news",
        "articles",
        "article",
        "posts",
        "post",
        "stories",
        "story",
        "insights",
        "press",
        "journal",
        "magazine",
        "updates",
        "guides",
        "guide",
        "tutorials",
        "case-studies",
    }
)
UTILITY_WORDS = frozenset(
    {
        "privacy",
        "terms",
        "legal",
        "cookies",
        "cookie",
        "imprint",
        "impressum",
        "disclaimer",
        "accessibility",
        "sitemap",
        "search",
        "login",
        "logout",
        "signin",
        "account",
        "cart",
    }
)
BUSY_CHANGEFREQ = frozenset({"always", "hourly", "daily"})

_TOKENS = re.compile(r"[-_.]")
_FORM_TITLE = re.compile(
    r"\b(?:contact(?: us)?|donate|sign ?up|register|subscribe|get in touch|apply now)\b",
    re.IGNORECASE,
)
_LISTING_TITLE = re.compile(
    r"^(?:blog|news|archives?|all (?:posts|articles|stories)|events|projects)\b"
    r"|\b(?:archives?|category|tag|topic)\s*:",
    re.IGNORECASE,
)


def tokens(segment: str) -> list[str]:
    """The words of a segment (``about-us`` → ``about``, ``us``)."""
    return [t for t in _TOKENS.split(segment) if t]


def _has_form(segment: str) -> bool:
    return not FORM_WORDS.isdisjoint(tokens(segment)) or any(p in segment for p in FORM_PHRASES)


def word_count(segment: str) -> int:
    return len(tokens(segment))


@dataclass(frozen=True, slots=True)
class PageType:
    """A URL's page type and the checklist slot it competes for (None: no slot)."""

    type: str
    slot: str | None


def classify(
    facts: PathFacts,
    changefreq: str | None = None,
    title: str | None = None,
    links: int | None = None,
) -> PageType:
    """The page type of a path (see the module docstring for the rules, in order)."""
    segs = facts.segments
    n = len(segs)
    if n == 0:
        return PageType("home", "home")
    if title is not None and title.__class__ is not str:
        title = None
    if any(_has_form(s) for s in segs) or (title and _FORM_TITLE.search(title)):
        return PageType("form", "form")
    if any(not DATA_WORDS.isdisjoint(tokens(s)) for s in segs):
        return PageType("data", "data")
    last = segs[-1]
    if (
        last in LISTING_WORDS
        or (n >= 2 and segs[-2] in TAXONOMY_WORDS)
        or facts.date_only
        or (title and _LISTING_TITLE.search(title))
        or (links is not None and links >= LISTING_LINKS)
        or (n <= 2 and changefreq is not None and changefreq.lower() in BUSY_CHANGEFREQ)
    ):
        return PageType("listing", "listing")
    words = word_count(last)
    if n == 1:
        if facts.keyword is not None:
            return PageType("pillar", "pillar:" + facts.keyword)
        if (
            not facts.marker
            and words < 3
            and not last.isdigit()
            and UTILITY_WORDS.isdisjoint(tokens(last))
        ):
            return PageType("pillar", "pillar:section")
    if facts.marker:
        return PageType(GENERIC, None)
    if words >= 3 or (n >= 2 and segs[0] in CONTENT_SECTIONS) or facts.date_like:
        return PageType("article", "article")
    if n == 2:
        return PageType("subsection", "subsection")
    return PageType(GENERIC, None)


def page_type(
    path: str,
    changefreq: str | None = None,
    title: str | None = None,
    links: int | None = None,
    keywords: re.Pattern[str] = DEFAULT_KEYWORDS,
) -> PageType:
    """The page type of ``path`` (a convenience over ``path_facts`` + ``classify``)."""
    return classify(path_facts(path, keywords), changefreq, title, links)


__all__ = [
    "BONUS_TYPES",
    "CHECKLIST",
    "GENERIC",
    "PageType",
    "classify",
    "is_marker",
    "page_type",
]
