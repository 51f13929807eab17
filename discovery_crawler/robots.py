"""The robots.txt policy of one origin (SPEC §6, RFC 9309): Protego decides, we explain.

A ``RobotsPolicy`` is built once per origin from what the fetch of ``/robots.txt`` gave —
a response (status, body) or a failure (timeout, network error) — and answers
``check(url) -> (allowed, rule)``. RFC 9309 semantics:

- 2xx: the body is parsed by Protego (the first ``max_bytes``, cut at a line break, as
  Google reads the first 500 KiB);
- 4xx (404, 401, 403, …) or no file: allow all (RFC 9309 §2.3.1.3);
- 429, 5xx, timeout, network error: disallow all for the origin — "fail closed"
  (§2.3.1.4; 429 as Google treats it: the server asks us to go away) — unless the crawl
  turned ``fail_closed`` off;
- redirects: the fetcher follows up to 5 hops (§2.3.1.2) and says how many it followed;
  a chain that never ends on a file counts as unavailable (allow all).

Rules are asked by the crawler's agent token, never by the User-Agent header. Protego does
not say which rule decided, so this module re-reads the file with Protego's own line
tokenizer and pattern matcher (private, pinned with Protego 0.7) to name the verbatim rule
that agrees with Protego's answer. No Scrapy imports: the policy is a plain object.
"""

from __future__ import annotations

import codecs
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from protego import Protego

from discovery_crawler.private_names import (
    ALLOW_DIRECTIVES,
    DISALLOW_DIRECTIVES,
    SITE_WIDE_DIRECTIVES,
    USER_AGENT_DIRECTIVES,
    URLPattern,
    extract_directive,
    hexescape,
    pattern_text,
    quote_path,
    quote_pattern,
)

# Protego's own tokenizer and matcher, so that the rule we name is the rule Protego applied
# (private names, kept in one place: private_names.py).
from discovery_crawler.urls.addresses import url_origin

logger = logging.getLogger(__name__)

DEFAULT_AGENT_TOKEN = "discovery-crawler"
DEFAULT_MAX_BYTES = 500 * 1024  # Google reads the first 500 KiB of a robots.txt
MAX_REDIRECTS = 5  # RFC 9309 §2.3.1.2

PARSED = "parsed"
ALLOW_ALL = "allow_all"
FAIL_CLOSED = "fail_closed"
_FAIL_CLOSED_TAIL = ": disallow all"  # what a fail-closed reason says after what failed

_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+").match


def request_origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL as requested, lowercased, default port and any
    userinfo dropped: the key of a policy — the origin the SSRF guard compares too
    (``urls.addresses.url_origin``; ``urls.normalize.origin_of`` splits a URL that is
    already normalized)."""
    return url_origin(url)


def is_robots_url(url: str) -> bool:
    """True for ``<origin>/robots.txt`` (no query): the file itself is always allowed."""
    parts = urlsplit(url)
    return parts.path == "/robots.txt" and not parts.query


def decode_robots(body: bytes) -> str:
    """Text of a robots.txt body: UTF-16 when its BOM says so, else UTF-8 with the BOM and
    any undecodable bytes dropped (a stray or partial BOM is garbage, not a directive)."""
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return body.decode("utf-16", errors="ignore")
    return body.decode("utf-8-sig", errors="ignore")


def cap_body(body: bytes, max_bytes: int) -> tuple[bytes, bool]:
    """The first ``max_bytes`` of ``body``, cut after the last line break so that no rule is
    read half-written; and whether anything was cut."""
    if max_bytes <= 0 or len(body) <= max_bytes:
        return body, False
    head = body[:max_bytes]
    cut = max(head.rfind(b"\n"), head.rfind(b"\r"))
    return (head[: cut + 1] if cut >= 0 else head), True


@dataclass(frozen=True)
class Rule:
    """One allow/disallow line of the file, as written (comment removed)."""

    field: str  # "allow" or "disallow"
    value: str
    line: int  # 1-based line number in the file
    text: str  # the line verbatim, e.g. "Disallow: /private/"


def scan_groups(text: str) -> dict[str, list[Rule]]:
    """Rules per user-agent of a ``canonical_agents`` text, in file order, grouped exactly as
    Protego groups them (same tokenizer, same group boundaries, groups of one agent merged)."""
    groups: dict[str, list[Rule]] = {}
    current: list[str] = []
    previous_field: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        hash_pos = raw.find("#")
        line = (raw[:hash_pos] if hash_pos != -1 else raw).strip()
        if not line:
            continue
        parsed = extract_directive(line)
        if parsed is None:
            continue
        field, value = parsed
        if (
            field in USER_AGENT_DIRECTIVES
            and previous_field is not None
            and previous_field not in USER_AGENT_DIRECTIVES
        ):
            current = []
        if field not in SITE_WIDE_DIRECTIVES:
            previous_field = field
        if not value:
            continue
        if field in USER_AGENT_DIRECTIVES:
            name = value.strip().lower()
            if name not in current:
                groups.setdefault(name, [])
                current.append(name)
        elif current and (field in ALLOW_DIRECTIVES or field in DISALLOW_DIRECTIVES):
            kind = "allow" if field in ALLOW_DIRECTIVES else "disallow"
            rule = Rule(kind, value, number, line)
            for name in current:
                groups[name].append(rule)
    return groups


def agent_name(value: str) -> str:
    """The product token a ``User-agent:`` value names, as Google reads it (RFC 9309 §2.2.1:
    letters, ``_`` and ``-``): ``FooBot/1.0`` and ``FooBot*`` name ``foobot``, ``Foo Bar``
    names ``foo``; ``*`` is the catch-all."""
    value = value.strip()
    if value == "*" or (value.startswith("*") and value[1:2].isspace()):
        return "*"
    match = _PRODUCT_TOKEN(value)
    return match.group().lower() if match else ""


def canonical_agents(text: str) -> str:
    """``text`` with every ``User-agent`` value replaced by the token it names, so that
    Protego groups by product token as RFC 9309 and Google do (other lines untouched, line
    numbers kept)."""
    lines = text.splitlines()
    changed = False
    for index, raw in enumerate(lines):
        if raw.lstrip()[:4].lower() != "user":
            continue
        hash_pos = raw.find("#")
        line = (raw[:hash_pos] if hash_pos != -1 else raw).strip()
        parsed = extract_directive(line) if line else None
        if parsed is None or parsed[0] not in USER_AGENT_DIRECTIVES or not parsed[1]:
            continue
        lines[index] = f"user-agent: {agent_name(parsed[1])}"
        changed = True
    return "\n".join(lines) if changed else text


def applicable_agent(agents: list[str], token: str) -> str | None:
    """The group that applies to ``token``: the one naming it exactly (case-insensitive,
    RFC 9309 §2.2.1), else ``*``, else none."""
    token = token.strip().lower()
    if token in agents:
        return token
    return "*" if "*" in agents else None


def _patterns(rule: Rule) -> list[URLPattern]:
    """The patterns Protego compiles for a rule (a ``$`` also matches literally; an allowed
    ``…/index.html`` also allows ``…/``)."""
    values = [rule.value]
    if "$" in rule.value:
        values.insert(0, rule.value.replace("$", hexescape("$")))
    patterns = [URLPattern(q) for q in (quote_pattern(v) for v in values) if q]
    if rule.field == "allow":
        for pattern in list(patterns):
            if pattern_text(pattern).endswith("/index.html"):
                patterns.append(URLPattern(pattern_text(pattern).removesuffix("index.html") + "$"))
    return patterns


# Paths whose form differs from what Protego compares (``quote_path``) hold a character
# outside its verbatim set, or start with "//"; the rest are compared as they are.
_QUOTING_NEEDED = re.compile(r"[^A-Za-z0-9_.~/=\n-]|\n//")
_VERBATIM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~/=\n-"
_VERBATIM_CHARS = frozenset(_VERBATIM.decode()) - {"\n"}


def _needs_quoting(text: str) -> bool:
    """``_QUOTING_NEEDED.search(text)``, for a whole batch at memcpy speed."""
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        return True
    return bool(data.translate(None, _VERBATIM)) or b"\n//" in data


# Escapes as a normalized URL writes them: upper case, any ASCII byte but "%" (whose escape
# Protego keeps), or a whole UTF-8 sequence (RFC 3629).
_CONT = "%[89AB][0-9A-F]"
_UTF8_ESCAPES = re.compile(
    "%[0-7][0-9A-F]"
    f"|%(?:C[2-9A-F]|D[0-9A-F]){_CONT}"
    f"|%E0%[AB][0-9A-F]{_CONT}|%(?:E[1-9A-CEF]){_CONT}{_CONT}|%ED%[89][0-9A-F]{_CONT}"
    f"|%F0%(?:9[0-9A-F]|[AB][0-9A-F]){_CONT}{_CONT}|%F[1-3]{_CONT}{_CONT}{_CONT}"
    f"|%F4%8[0-9A-F]{_CONT}{_CONT}"
)
_SUSPECT_ESCAPE = re.compile("%")  # left once the escapes above are taken out
_ESCAPED_RESERVED = tuple(
    (chr(code), f"%{code:02X}")
    for code in range(0x20, 0x7F)
    if chr(code) not in _VERBATIM_CHARS and chr(code) != "%"
)


def _literal_start(pattern: str) -> str:
    """The start every path a quoted pattern matches has, in its normalized form too: the
    pattern's verbatim characters up to its first wildcard or escape (a quoted "=" may be
    a "%3D" in a normalized path, so that ends it as well)."""
    end = len(pattern)
    for index, char in enumerate(pattern):
        if char not in _VERBATIM_CHARS or char == "=":
            end = index
            break
    return pattern[:end]


def _quoted_paths(text: str, urls: list[str]) -> str:
    """The newline-joined paths of ``text`` in the form Protego compares: at C speed when
    every escape is an upper-case one of valid UTF-8 (as normalized URLs write them);
    else the paths that differ from it are replaced by ``quote_path`` of their URL."""
    if text.isascii() and _SUSPECT_ESCAPE.search(_UTF8_ESCAPES.sub("", text)) is None:
        # Protego decodes every escape but those of "/" and "%" and encodes again all but
        # its verbatim characters, "/", "%" and "=": valid escapes come back as they were,
        # "%3D" comes back "=", and a bare reserved character comes back escaped.
        for char, escaped in _ESCAPED_RESERVED:  # a few memchr scans: most are absent
            if char in text:
                text = text.replace(char, escaped)
        return text.replace("%3D", "=")
    paths = text[1:].split("\n")
    lines = set()
    newlines = counted = 0
    for match in _QUOTING_NEEDED.finditer(text):
        end = match.start() + 1  # the match's first character is on its path's line
        newlines += text.count("\n", counted, end)
        counted = end
        lines.add(newlines - 1)
    for line in lines:
        paths[line] = quote_path(urls[line])
    return "\n" + "\n".join(paths)


def _pattern_regex(pattern: str) -> str:
    """A quoted Protego pattern as a regex over a path (``*``: any run; a final ``$``: the
    path's end), matching exactly where ``URLPattern.match`` does."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = "[^\n]*".join(re.escape(part) for part in body.split("*"))
    return regex + ("(?=\n|\\Z)" if anchored else "")


class _Explainer:
    """The group's rules ordered as Protego orders them: longest pattern first, allow
    before disallow on a tie, file order after that."""

    def __init__(self, rules: list[Rule]):
        compiled = [(p, r) for r in rules for p in _patterns(r)]
        compiled.sort(key=lambda pr: (pr[0].priority, pr[1].field == "allow"), reverse=True)
        self.compiled = compiled

    def deciding_rule(self, url: str) -> Rule | None:
        path = quote_path(url)
        for pattern, rule in self.compiled:
            if pattern.match(path):
                return rule
        return None


class RobotsPolicy:
    """What robots.txt says for one origin, and why; one per origin per crawl."""

    def __init__(
        self,
        url: str,
        *,
        token: str = DEFAULT_AGENT_TOKEN,
        outcome: str,
        reason: str,
        fetched: bool = False,
        status: int | None = None,
        final_url: str | None = None,
        redirects: list[str] | None = None,
        error: str | None = None,
        text: str | None = None,
        size: int | None = None,
        parsed_bytes: int | None = None,
        truncated: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ):
        self.url = url
        self.origin = request_origin(url)
        self.token = token
        self.outcome = outcome
        self.reason = reason
        self.fetched = fetched
        self.status = status
        self.final_url = final_url or url
        self.redirects = list(redirects or [])
        self.error = error
        self.size = size
        self.parsed_bytes = parsed_bytes
        self.truncated = truncated
        self.max_bytes = max_bytes
        self.parser: Protego | None = None
        self.group: str | None = None
        self.rules: list[Rule] = []
        self.crawl_delay: float | None = None
        self.sitemaps: list[str] = []
        self._explainer: _Explainer | None = None
        self._scan: tuple[re.Pattern[str] | None, bool] | None = None  # disallowed_many's
        if text is not None:
            self._parse(text)

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def from_response(
        cls,
        url: str,
        status: int,
        body: bytes,
        token: str = DEFAULT_AGENT_TOKEN,
        *,
        final_url: str | None = None,
        redirects: list[str] | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        fail_closed: bool = True,
    ) -> RobotsPolicy:
        """The policy for an HTTP answer to ``url`` (after ``redirects`` hops to ``final_url``)."""
        common: dict[str, Any] = {
            "token": token,
            "fetched": True,
            "status": status,
            "final_url": final_url,
            "redirects": redirects,
            "size": len(body),
            "max_bytes": max_bytes,
        }
        hops = len(redirects or [])
        if 200 <= status < 300:
            head, truncated = cap_body(body, max_bytes)
            reason = f"robots.txt answered {status}: parsed"
            if truncated:
                reason += f" (only the first {len(head):,} of {len(body):,} bytes, as Google)"
            return cls(
                url,
                outcome=PARSED,
                reason=reason,
                text=decode_robots(head),
                parsed_bytes=len(head),
                truncated=truncated,
                **common,
            )
        if 300 <= status < 400:
            reason = (
                f"robots.txt still redirecting ({status}) after {hops} hop(s) "
                f"(limit {MAX_REDIRECTS}): treated as unavailable, allow all (RFC 9309 §2.3.1.2)"
            )
            return cls(url, outcome=ALLOW_ALL, reason=reason, **common)
        if 400 <= status < 500 and status != 429:
            reason = f"robots.txt answered {status}: unavailable, allow all (RFC 9309 §2.3.1.3)"
            return cls(url, outcome=ALLOW_ALL, reason=reason, **common)
        what = f"robots.txt answered {status}"
        return cls._unreachable(url, what, fail_closed, **common)

    @classmethod
    def from_failure(
        cls,
        url: str,
        kind: str,
        message: str,
        token: str = DEFAULT_AGENT_TOKEN,
        *,
        redirects: list[str] | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        fail_closed: bool = True,
    ) -> RobotsPolicy:
        """The policy when fetching ``url`` gave no answer: ``kind`` is e.g. ``timeout``,
        ``dns``, ``connection refused``, ``network``; ``message`` the error text."""
        what = f"robots.txt {kind}" + (f" ({message})" if message and message != kind else "")
        return cls._unreachable(
            url,
            what,
            fail_closed,
            token=token,
            redirects=redirects,
            error=f"{kind}: {message}" if message else kind,
            max_bytes=max_bytes,
        )

    @classmethod
    def _unreachable(cls, url: str, what: str, fail_closed: bool, **kw: Any) -> RobotsPolicy:
        if fail_closed:
            reason = f"{what}{_FAIL_CLOSED_TAIL} for this origin (fail closed, RFC 9309 §2.3.1.4)"
            return cls(url, outcome=FAIL_CLOSED, reason=reason, **kw)
        reason = f"{what}: ROBOTS_FAIL_CLOSED is off, allow all"
        return cls(url, outcome=ALLOW_ALL, reason=reason, **kw)

    @classmethod
    def from_text(
        cls, text: str | bytes, token: str = DEFAULT_AGENT_TOKEN, url: str = ""
    ) -> RobotsPolicy:
        """A policy from a file's content alone, as if served with 200 (tests, tools)."""
        body = text.encode("utf-8") if isinstance(text, str) else text
        return cls.from_response(url or "http://example.com/robots.txt", 200, body, token)

    def _parse(self, text: str) -> None:
        text = canonical_agents(text)
        self.parser = Protego.parse(text)
        groups = scan_groups(text)
        self.group = applicable_agent(list(groups), self.token)
        self.rules = groups[self.group] if self.group is not None else []
        # Protego is asked by the group's own name: its substring matching would otherwise
        # apply "User-agent: discovery" to the token "discovery-crawler".
        if self.group is not None:
            self.crawl_delay = self.parser.crawl_delay(self.group)
        self.sitemaps = _sitemap_urls(self.final_url, self.parser.sitemaps)
        if self.group is None:
            self.reason += f"; no group names {self.token} and there is no *: allow all"
        else:
            self.reason += f"; group {self.group!r} applies ({len(self.rules)} rules)"

    # -- questions ------------------------------------------------------------------------
    def check(self, url: str) -> tuple[bool, str | None]:
        """``(allowed, rule)``: the verbatim rule that blocked ``url`` (or why all is
        blocked); ``None`` when allowed."""
        if self.outcome == FAIL_CLOSED:
            if is_robots_url(url):
                return True, None
            # What failed, whole: the error text in its parentheses may hold colons itself.
            return False, f"fail closed: {self.reason.partition(_FAIL_CLOSED_TAIL)[0]}"
        if self.parser is None or self.group is None:
            return True, None
        if self.parser.can_fetch(url, self.group):
            return True, None
        rule = self._deciding_rule(url)
        if rule is None or rule.field != "disallow":
            # Never expected (the matcher is Protego's own); keep the answer Protego's.
            logger.debug("robots: no disallow rule found for %s (Protego disallows)", url)
            return False, f"disallowed for group {self.group!r} (rule not identified)"
        return False, rule.text

    def allowed(self, url: str) -> bool:
        return self.check(url)[0]

    def disallowed_many(self, urls: list[str], origin: str) -> list[str | None]:
        """For each URL of ``origin``, the rule that disallows it (``check``'s), or None.

        The batch form of ``check`` for the pipeline: one regex pass over the batch's
        paths finds the URLs a disallow pattern may match, and only those are checked (an
        allow rule may still win). When every disallow pattern starts with a literal
        path (``/private/``), the pass looks for those starts in the paths as they are;
        otherwise it matches the patterns in the form Protego compares (``quote_path``).
        """
        if self.outcome == FAIL_CLOSED:
            return [self.check(url)[1] for url in urls]
        if self.parser is None or self.group is None or not urls:
            return [None] * len(urls)
        scan, quoted = self._disallow_scan()
        if scan is None:
            return [None] * len(urls)
        prefix = origin + "/"
        # Every URL sorts between the least and the greatest: if both start with the
        # origin's prefix, all do.
        on_origin = min(urls).startswith(prefix) and max(urls).startswith(prefix)
        text = "\n" + "\n".join(urls)
        if text.count("\n") != len(urls) or not on_origin:
            return [self.check(url)[1] for url in urls]  # never expected of normalized URLs
        text = text.replace("\n" + origin, "\n")
        if quoted and _needs_quoting(text):  # some paths are not in Protego's form
            text = _quoted_paths(text, urls)
        out: list[str | None] = [None] * len(urls)
        line = counted = 0
        for match in scan.finditer(text):
            start = match.start()  # the newline before URL number `line`
            line += text.count("\n", counted, start)
            counted = start
            out[line] = self.check(urls[line])[1]
        return out

    def _disallow_scan(self) -> tuple[re.Pattern[str] | None, bool]:
        """``disallowed_many``'s regex, matched after each newline of the batch's paths,
        and whether it wants the paths quoted as Protego quotes them."""
        if self._scan is None:
            patterns = [
                pattern_text(pattern)
                for rule in self.rules
                if rule.field == "disallow"
                for pattern in _patterns(rule)
            ]
            starts = {_literal_start(p) for p in patterns}
            if not patterns:
                self._scan = (None, False)
            elif all(len(start) > 1 for start in starts):
                regex = "|".join(re.escape(start) for start in sorted(starts))
                self._scan = (re.compile(f"\n(?:{regex})"), False)
            else:
                regex = "|".join(sorted({_pattern_regex(p) for p in patterns}))
                self._scan = (re.compile(f"\n(?:{regex})"), True)
        return self._scan

    def _deciding_rule(self, url: str) -> Rule | None:
        if self._explainer is None:
            self._explainer = _Explainer(self.rules)
        return self._explainer.deciding_rule(url)

    def as_dict(self) -> dict[str, Any]:
        """The record of SPEC §6, as the crawl log keeps it."""
        return {
            "url": self.url,
            "final_url": self.final_url,
            "redirects": len(self.redirects),
            "redirect_chain": self.redirects,
            "fetched": self.fetched,
            "status": self.status,
            "error": self.error,
            "outcome": self.outcome,
            "reason": self.reason,
            "agent_token": self.token,
            "group": self.group,
            "rules": [r.text for r in self.rules],
            "crawl_delay": self.crawl_delay,
            "sitemaps": self.sitemaps,
            "bytes": self.size,
            "parsed_bytes": self.parsed_bytes,
            "truncated": self.truncated,
            "max_bytes": self.max_bytes,
        }

    def __repr__(self) -> str:
        return f"<RobotsPolicy {self.origin} {self.outcome} group={self.group!r}>"


def _sitemap_urls(base: str, values: Any) -> list[str]:
    """The ``Sitemap:`` lines' URLs resolved against the file's, each once, in file order;
    a value no URL can be made of (``http://[bad/``: urljoin raises) is left out."""
    urls: dict[str, None] = {}
    for value in values:
        try:
            urls[urljoin(base, value)] = None
        except ValueError:
            logger.debug("robots: Sitemap line %r is not a URL: ignored", value)
    return list(urls)


class PolicyStore:
    """The policies of one crawl, by origin; what the throttle asks for Crawl-delay."""

    def __init__(self) -> None:
        self._policies: dict[str, RobotsPolicy] = {}

    def get(self, origin: str) -> RobotsPolicy | None:
        return self._policies.get(origin)

    def put(self, origin: str, policy: RobotsPolicy) -> bool:
        """Keep ``policy`` for ``origin`` unless one is already known; True when kept."""
        if origin in self._policies:
            return False
        self._policies[origin] = policy
        return True

    def crawl_delay(self, origin_or_url: str) -> float | None:
        """The Crawl-delay robots.txt asks of our token for this origin, if any."""
        policy = self._policies.get(request_origin(origin_or_url))
        return policy.crawl_delay if policy else None

    def __contains__(self, origin: str) -> bool:
        return origin in self._policies

    def __len__(self) -> int:
        return len(self._policies)

    def values(self) -> list[RobotsPolicy]:
        return list(self._policies.values())
