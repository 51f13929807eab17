"""The junk-page patterns (SPEC §7): CMS drafts, samples and one-off pages.

WordPress and other CMSs leave test pages, sample content, drafts, campaign one-offs and A/B
variants in public sitemaps; with a cap of 5 pages they would crowd out the real ones. This
module only *names* them: which pattern a URL path matches (its ``name`` is the
``junk_pattern`` of the feed record and the reason in ``_crawl-log.json``). A junk URL is
flagged, not dropped — flagging, sparing the URLs named in ``pages`` and switching the filter
off are the pipeline's business — so what matters here is precision: a pattern must not fire
on real content, since a flagged page is never selected.

How a path is matched. Only the URL path counts (anything from the first ``?`` or ``#`` is
ignored; a path without a leading ``/`` gets one), ASCII case-insensitively, one *segment*
(the text between two ``/``) at a time. A segment may end with a page extension (``.html``,
``.htm``, ``.shtml``, ``.xhtml``, ``.php``, ``.asp``, ``.aspx``, ``.jsp``, ``.cfm``) or matrix
parameters (``;jsessionid=1``); a file's name (``test1.png``, ``test.pdf``) is not a page's.
``N`` below is a run of digits, and ``-`` in a rule also accepts ``_``. The first row of the
table (in this order) that matches an eligible segment names the reason.

Where a pattern may fire — what precision means for a leftover page. An editor makes test
pages, samples and copies in the CMS's page tree, near its top; a segment deep in a path is
the name of a record in a catalogue (``/experiments/ERP022128/test``: an experiment its
submitter titled "test"), of a module in a reference (``/3/library/test.html``) or of a term
in a vocabulary, and that is real content whatever it says. So:

- **Shallow only**: a segment is eligible at depth 1 or 2, depth counted without a leading
  locale (``/en/``, ``/pt-br/``) and without date segments (``/2024/``, ``/2024/05/23/``,
  ``/2024-05-23/``): ``/test/``, ``/blog/test/``, ``/en/blog/2024/05/test/`` are depth 1–2;
  ``/experiments/ERP022128/test`` is depth 3.
- **Not a taxonomy term**: the segment after ``tag``, ``tags``, ``category``, ``categories``,
  ``topic``, ``topics``, ``label`` or ``labels`` names a term of the site's vocabulary, whose
  listing page is generated (``/tags/working-copy``: posts about the Working Copy app).
- **CMS samples** (the sample rows) are what a CMS or a site template creates at install: at
  the top level (WordPress's ``/hello-world/``, ``/sample-page/``) or in the blog at depth 2
  (under ``blog``, ``blogs``, ``news``, ``post``, ``posts``, ``article``, ``articles``,
  ``stories``: Docusaurus's ``/blog/hello-world``). ``/docs/hello-world/`` is a tutorial.
- **Markers on a short slug** (the *marker* rows): ``-copy``, ``-old``, ``-backup``,
  ``draft-``, ``copy-of-``, ``-variant-b``, ``-v2-test`` mark a copy of a page only on a short
  slug — the rest of the segment (its *stem*, without a trailing ``-N``) at most three words —
  and not when the word next to the marker makes it a phrase (``and``, ``or``, ``of``,
  ``the``, ``a``, ``an``, ``in``, ``on``, ``for``, ``to``, ``vs``, ``with``, ``my``, ``your``,
  ``our``, ``their``, ``is``, ``are``, ``too``, ``so``, ``how``). A long descriptive slug is
  a title: ``/…-influenza-vaccine-response-in-young-and-old`` is an article, ``/get-a-copy/``
  an order form, ``/about-old/`` and ``/home-old-2/`` are copies.
- **Prefixes at the top level only**: ``draft-…`` and ``copy-of-…`` one level down name
  documents (IETF's Internet-Drafts: ``/html/draft-koster-rep``, ``/doc/draft-ietf-…``),
  not a CMS's copies of its pages.

The table
Test pages
  ``test``            test with an optional number: test, test1, test-2, test_3.
  ``test-page``       test-page, test-post, test-content, test-article, test-site, test-product,
                      test-form (``-N`` allowed). Other ``test-…`` words are real: test-drive.
  ``testing-number``  testing-N, testingN. A bare /testing/ is a real page (a lab's, a QA
                      firm's), so it stays.
CMS samples — the exact segment, with an optional ``-N`` (CMSs de-duplicate slugs so)
  ``sample-page``, ``hello-world``, ``lorem-ipsum``, ``example-page``; ``untitled`` also takes
  a bare number (untitled1). A post *about* them is real: /hello-world-in-rust/.
Drafts and copies (marker rows but ``temp``)
  ``draft-prefix``    a segment starting with ``draft-``: /draft-new-home/. Not /drafts/,
                      /drafting-services/, /mock-draft/. Known false positive: /draft-beer/ —
                      name it in ``pages`` to select it.
  ``copy-suffix``     ending with ``-copy`` (or ``-copy-N``): /about-copy/. Not /copy/,
                      /copyright/, /copywriting/, nor a kind of copy: ``-copy`` after ad,
                      sales, web, body, hard, soft, carbon, working, master, fair.
  ``copy-of-prefix``  starting with ``copy-of-``: /copy-of-about/.
  ``old-suffix``      ending with ``-old`` (or ``-old-N``) — the suffix only, so /old-town/ and
                      /golden-oldies/ stay, and a bare /old/ is left to scoring (SPEC §8: −4).
                      Ages are spared: ``-old`` after year(s), month(s), week(s), day(s)
                      (/2-year-old/).
  ``backup-suffix``   ending with ``-backup`` (or ``-backup-N``): /home-backup/. Not a segment
                      starting with backup (/backup-software/), a bare /backup/, nor a backup
                      *product*: ``-backup`` after cloud, data, database, server(s), online,
                      site (website, offsite), file(s), mail (email), power, battery.
  ``temp``            exactly temp or tmp, with an optional number: /temp/, /tmp2/. Not
                      /temperature/, /templates/, /tmpl/, /temp-agency/.
One-off campaigns
  ``holiday-number``  holiday + N: /holiday1/, /holiday-2024/. Not /holiday/ nor /holidays/ (a
                      page about holidays: opening hours, a travel section).
  ``promo-number``    promo + N: /promo-2/. Not /promo/, /promotions/, /promo-codes/.
  ``landing-test``    landing-test or landing-page-test (``-N`` allowed). Not /landing/.
A/B variants (marker rows)
  ``variant-suffix``  ending with ``variant-`` + one letter or a 1–2 digit number:
                      /home-variant-b/, /variant-2/. Not /variants/, /variant-calling/.
  ``version-test``    ending with ``vN-test`` (``-N`` allowed): /pricing-v2-test/, /v3-test/.
                      Not /v2/, /pricing-v2/, /v2-testimonials/.
Never junk: /page-2/ and /page/2/ (the pagination rule's business), /year-2024/,
/annual-report-2023/, /testimonials/, /latest/, /contest/, /attestation/.

``scripts/junk_hits.py`` lists every URL of the project's real data (sitemaps and site
archives) that the table flags: rerun it, and judge each URL, when you change a row.

Speed. Walking the table for every path would be slow. ``junk_patterns_many`` instead joins the
batch into one lowercased text and makes six passes over it — one for the rows anchored at a
segment start, one per suffix keyword led by that literal, so that ``re`` scans for it in C —
then walks the table only for the paths they flag (a superset of the junk ones: the passes
know nothing of depth, taxonomies or word counts). Timings: bench/README.md.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from discovery_crawler.compiled import extension

# junk_patterns_many's screen in C (``_screens.c``); where it was not built, in Python
_screens = extension("discovery_crawler.urls._screens")


class JunkPattern(NamedTuple):
    """One row of the junk table: ``name`` is the stable reason written to the crawl log."""

    name: str
    family: str
    regex: re.Pattern[str]  # one whole segment, without its page extension (``fullmatch``)
    shape: str = "anywhere"  # where it may fire: ANYWHERE (shallow), SUFFIX, PREFIX, SAMPLE


TEST_PAGES = "test pages"
CMS_SAMPLES = "CMS samples"
DRAFTS_AND_COPIES = "drafts and copies"
ONE_OFF_CAMPAIGNS = "one-off campaigns"
AB_VARIANTS = "A/B variants"

_CH = r"[^/?#;]"  # a character of a segment
_SEP = r"[-_]"
_NUM = r"(?:[-_]?[0-9]+)?"  # optional number: test1, test-2, test_3
_DEDUP = r"(?:[-_][0-9]+)?"  # optional CMS de-duplication suffix: sample-page-2
_STEM = rf"(?P<stem>{_CH}+?)"  # what a marker marks (its words are counted)
_TEST_WORDS = r"(?:page|post|content|article|site|product|form)"
_VARIANT = r"variant[-_](?:[a-z]|[0-9]{1,2})"  # variant-b, variant_2


def _not_after(*words: str) -> str:
    """Lookbehinds refusing a separator that follows one of ``words``."""
    return "".join(f"(?<!{word})" for word in words)


_NOT_AGE = _not_after("year", "years", "month", "months", "week", "weeks", "day", "days")
_NOT_PRODUCT = _not_after(
    "cloud", "data", "database", "server", "servers", "online", "site", "file", "files", "mail",
    "power", "battery",
)  # fmt: skip
_NOT_KIND_OF_COPY = _not_after(
    "ad", "sales", "web", "body", "hard", "soft", "carbon", "working", "master", "fair"
)

# Where a row may fire besides the shared rules (module docstring): anywhere shallow; on a
# short slug only (the markers: the regex has a group ``stem``), and for a prefix at the top
# level only; or where a CMS puts samples.
ANYWHERE, SUFFIX, PREFIX, SAMPLE = "anywhere", "suffix", "prefix", "sample"

# (name, family, shape, regex of one whole segment). Order matters: the first match names the
# reason. Adding a row? Its hits must also be found by _PREFILTERS below and by the C
# screen's keywords (``_screens.c``, ``keyword_at``): the tests check each row's hits both ways.
_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("test", TEST_PAGES, ANYWHERE, rf"test{_NUM}"),
    ("test-page", TEST_PAGES, ANYWHERE, rf"test{_SEP}?{_TEST_WORDS}{_DEDUP}"),
    ("testing-number", TEST_PAGES, ANYWHERE, r"testing[-_]?[0-9]+"),
    ("sample-page", CMS_SAMPLES, SAMPLE, rf"sample{_SEP}?page{_DEDUP}"),
    ("hello-world", CMS_SAMPLES, SAMPLE, rf"hello{_SEP}?world{_DEDUP}"),
    ("lorem-ipsum", CMS_SAMPLES, SAMPLE, rf"lorem{_SEP}?ipsum{_DEDUP}"),
    ("untitled", CMS_SAMPLES, SAMPLE, rf"untitled{_NUM}"),
    ("example-page", CMS_SAMPLES, SAMPLE, rf"example{_SEP}?page{_DEDUP}"),
    ("draft-prefix", DRAFTS_AND_COPIES, PREFIX, rf"draft{_SEP}(?P<stem>{_CH}+)"),
    ("copy-suffix", DRAFTS_AND_COPIES, SUFFIX, rf"{_STEM}{_NOT_KIND_OF_COPY}{_SEP}copy{_DEDUP}"),
    ("copy-of-prefix", DRAFTS_AND_COPIES, PREFIX, rf"copy{_SEP}of{_SEP}(?P<stem>{_CH}+)"),
    ("old-suffix", DRAFTS_AND_COPIES, SUFFIX, rf"{_STEM}{_NOT_AGE}{_SEP}old{_DEDUP}"),
    ("backup-suffix", DRAFTS_AND_COPIES, SUFFIX, rf"{_STEM}{_NOT_PRODUCT}{_SEP}backup{_DEDUP}"),
    ("temp", DRAFTS_AND_COPIES, ANYWHERE, rf"te?mp{_NUM}"),
    ("holiday-number", ONE_OFF_CAMPAIGNS, ANYWHERE, r"holiday[-_]?[0-9]+"),
    ("promo-number", ONE_OFF_CAMPAIGNS, ANYWHERE, r"promo[-_]?[0-9]+"),
    ("landing-test", ONE_OFF_CAMPAIGNS, ANYWHERE, rf"landing{_SEP}(?:page{_SEP})?test{_DEDUP}"),
    ("variant-suffix", AB_VARIANTS, SUFFIX, rf"(?:{_STEM}{_SEP})?{_VARIANT}"),
    ("version-test", AB_VARIANTS, SUFFIX, rf"(?:{_STEM}{_SEP})?v[0-9]+{_SEP}test{_DEDUP}"),
)  # fmt: skip

JUNK_PATTERNS: tuple[JunkPattern, ...] = tuple(
    JunkPattern(name, family, re.compile(body, re.ASCII | re.IGNORECASE), shape)
    for name, family, shape, body in _ROWS
)

# Where a row may fire (module docstring): depth, locale, dates, taxonomies, the blog.
MAX_DEPTH = 2
_PAGE_EXTENSION = re.compile(r"\.(?:html?|shtml|xhtml|php|aspx?|jsp|cfm)\Z", re.ASCII | re.I)
_LOCALE = re.compile(r"[a-z]{2}(?:[-_][a-z0-9]{2,4})?", re.ASCII | re.IGNORECASE)
_DATE = re.compile(r"(?:19|20)[0-9]{2}(?:[-_][0-9]{1,2}){0,2}", re.ASCII)
_DAY = re.compile(r"[0-9]{1,2}", re.ASCII)  # a month or a day, after a year
_TAXONOMIES = frozenset(
    ("tag", "tags", "category", "categories", "topic", "topics", "label", "labels")
)
_BLOGS = frozenset(("blog", "blogs", "news", "post", "posts", "article", "articles", "stories"))
MAX_STEM_WORDS = 3
_WORDS = re.compile(r"[-_]+")
_TRAILING_NUMBER = re.compile(r"[-_][0-9]+\Z", re.ASCII)
_PHRASE_WORDS = frozenset(
    ("and", "or", "of", "the", "a", "an", "in", "on", "for", "to", "vs", "with", "my", "your",
     "our", "their", "is", "are", "too", "so", "how")
)  # fmt: skip

# The batch prefilter: run on the lowercased batch text "/" + "\n/".join(paths), it finds every
# path some row matches, and a few more (ages, products: the table decides). Lowercasing may
# turn a non-ASCII letter into an ASCII one (K, the Kelvin sign) — that only adds candidates,
# hence no exclusion lookbehinds here. "\n" ends a segment.
_PCH = r"[^/?#;\n]"
_PEND = r"(?:\.[a-z0-9]{1,5})?(?=[/?#;\n]|\Z)"
_PREFILTERS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(regex, re.ASCII)
    for regex in (
        # Rows anchored at a segment start, and the stemless forms of the A/B rows.
        rf"/(?:test{_NUM}|test{_SEP}?{_TEST_WORDS}{_DEDUP}"
        rf"|testing[-_]?[0-9]+|sample{_SEP}?page{_DEDUP}|hello{_SEP}?world{_DEDUP}"
        rf"|lorem{_SEP}?ipsum{_DEDUP}|untitled{_NUM}|example{_SEP}?page{_DEDUP}"
        rf"|draft{_SEP}{_PCH}+|copy{_SEP}of{_SEP}{_PCH}+|te?mp{_NUM}|holiday[-_]?[0-9]+"
        rf"|promo[-_]?[0-9]+|landing{_SEP}(?:page{_SEP})?test{_DEDUP}"
        rf"|variant{_SEP}(?:[a-z]|[0-9]{{1,2}})|v[0-9]+{_SEP}test{_DEDUP}){_PEND}",
        # Suffix rows: the keyword leads, a lookbehind checks the separator and the stem.
        rf"copy(?<={_PCH}[-_]copy){_DEDUP}{_PEND}",
        rf"old(?<={_PCH}[-_]old){_DEDUP}{_PEND}",
        rf"backup(?<={_PCH}[-_]backup){_DEDUP}{_PEND}",
        rf"variant(?<={_PCH}[-_]variant){_SEP}(?:[a-z]|[0-9]{{1,2}}){_PEND}",
        rf"test(?<=[0-9][-_]test){_DEDUP}{_PEND}",
    )
)


def _eligible(path: str) -> list[tuple[str, int, str]]:
    """The segments of ``path`` a row may fire on, each without its matrix parameters and
    page extension, with its depth and its parent segment (lowercased)."""
    out: list[tuple[str, int, str]] = []
    depth = 0
    dated = False
    parent = ""  # the previous counted segment, lowercased
    for i, segment in enumerate(path.split("/")[1:]):
        segment = segment.partition(";")[0]
        if not segment:
            continue
        lower = segment.lower()
        if i == 0 and _LOCALE.fullmatch(lower):
            continue
        if _DATE.fullmatch(lower) or (dated and _DAY.fullmatch(lower)):
            dated = True
            continue
        dated = False
        depth += 1
        if depth > MAX_DEPTH:
            break
        if parent not in _TAXONOMIES:
            ext = _PAGE_EXTENSION.search(segment)
            out.append((segment[: ext.start()] if ext else segment, depth, parent))
        parent = lower
    return out


def _short_stem(stem: str | None, prefix: bool) -> bool:
    """A marker row's stem reads like a page's slug, not a title: at most
    ``MAX_STEM_WORDS`` words (a trailing ``-N`` not counted), no phrase word by the marker."""
    if not stem:
        return True
    stem = _TRAILING_NUMBER.sub("", stem)
    words = [w for w in _WORDS.split(stem.lower()) if w]
    if len(words) > MAX_STEM_WORDS:
        return False
    return not words or (words[0] if prefix else words[-1]) not in _PHRASE_WORDS


def _table_match(path: str) -> JunkPattern | None:
    """Walk the table for one path (the exact, slow definition)."""
    for sep in "?#":
        at = path.find(sep)
        if at >= 0:
            path = path[:at]
    if not path.startswith("/"):
        path = "/" + path
    segments = _eligible(path)
    if not segments:
        return None
    for pattern in JUNK_PATTERNS:
        fullmatch = pattern.regex.fullmatch
        shape = pattern.shape
        for segment, depth, parent in segments:
            if depth > 1 and (shape is PREFIX or (shape is SAMPLE and parent not in _BLOGS)):
                continue
            found = fullmatch(segment)
            if found is None:
                continue
            if (shape is SUFFIX or shape is PREFIX) and not _short_stem(
                found["stem"], shape is PREFIX
            ):
                continue
            return pattern
    return None


def junk_pattern(path: str) -> JunkPattern | None:
    """The first pattern of the table that matches a segment of ``path``, or None."""
    if "\n" in path:  # the prefilters end a segment at a newline; the table does not
        return _table_match(path)
    text = "/" + path.lower()
    for prefilter in _PREFILTERS:
        if prefilter.search(text) is not None:
            return _table_match(path)
    return None


def junk_patterns_many(paths: list[str]) -> list[JunkPattern | None]:
    """``junk_pattern`` for a batch (the pipeline's hot path): six passes over the whole
    batch text, then the table for the few paths they flag. Where ``_screens`` was built,
    one scan in C of each path for the rows' keywords instead (a superset of what the
    passes flag), then ``junk_pattern`` for the paths it finds."""
    out: list[JunkPattern | None] = [None] * len(paths)
    if _screens is not None and paths.__class__ is list:
        for i in _screens.junk_candidates(paths):
            out[i] = junk_pattern(paths[i])
        return out
    text = "/" + "\n/".join(paths)  # a "/" before every path: an empty segment matches nothing
    if text.count("\n") != len(paths) - 1:  # a path holds a newline (never a normalized one)
        return [_table_match(path) for path in paths]
    text = text.lower()
    starts = sorted({m.start() for prefilter in _PREFILTERS for m in prefilter.finditer(text)})
    line = counted = 0
    checked = -1
    for start in starts:
        line += text.count("\n", counted, start)
        counted = start
        if line != checked:
            checked = line
            out[line] = _table_match(paths[line])
    return out
