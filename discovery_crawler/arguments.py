"""Spider arguments (``-a name=value``): validated once, at spider start.

A wrong argument fails at once with one line naming the argument and what it accepts
(``ArgumentError``); the project's ``crawl`` command prints that line and exits with
status 2 instead of a traceback. A start URL with credentials in it is refused without
echoing them (``redact_credentials``): no message, log or file of the run holds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from discovery_crawler.refusals import download_cap_text, tls_failure_reason
from discovery_crawler.urls.normalize import UrlError, host_of, normalize, origin_of

MODES = ("auto", "sitemap", "links", "union")
RENDER = ("never", "auto", "always")
SITEMAP_SUFFIXES = (".xml", ".xml.gz", ".txt", ".txt.gz", ".gz", ".rss", ".atom")
# Scrapy's URLLENGTH_LIMIT default: no request for a longer URL is sent (its
# UrlLengthMiddleware drops it). 2,083 characters was Internet Explorer's maximum.
URL_LENGTH_LIMIT = 2083


class ArgumentError(ValueError):
    """A spider argument with a value it does not accept."""

    def __init__(self, name: str, message: str):
        super().__init__(f"argument {name}: {message}")
        self.name = name


def _flag(name: str, value: object) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ArgumentError(name, f"expected 0 or 1, got {value!r}")


def _int(name: str, value: object, low: int, high: int | None = None) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ArgumentError(name, f"expected a whole number, got {value!r}") from None
    if number < low or (high is not None and number > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ArgumentError(name, f"expected a number {bound}, got {number}")
    return number


def _paths(value: object) -> tuple[str, ...]:
    items = [p.strip() for p in str(value).split(",") if p.strip()]
    return tuple(p if p.startswith("/") else "/" + p for p in items)


def input_kind(url: str) -> str:
    """``robots``, ``sitemap`` or ``homepage``, judged from the URL's path."""
    path = urlsplit(url).path.lower()
    if path.endswith("/robots.txt"):
        return "robots"
    if path.endswith(SITEMAP_SUFFIXES):
        return "sitemap"
    return "homepage"


def scheme_added(value: object) -> bool:
    """Whether the start URL was given without a scheme (``example.com``, ``host:8080``),
    so that ``validate_url`` reads it as ``https://``."""
    text = str(value).strip()
    return "://" not in text and not text.startswith("/")


def redact_credentials(url: str) -> str:
    """``url`` with whatever comes before ``@`` in its authority (a user name, a password,
    a token) replaced by ``***``: what a message may show of a URL given with credentials."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rpartition('@')[2]}{rest[end:]}"


def validate_url(value: object) -> str:
    """Return the start URL, or raise ``ArgumentError`` saying what is accepted (never
    echoing credentials given in it)."""
    accepted = "an http(s) URL of a homepage, a sitemap (.xml, .xml.gz, .txt) or a robots.txt"
    if value is None or not str(value).strip():
        raise ArgumentError(
            "url", f"missing; expected {accepted}, e.g. -a url=https://example.com/"
        )
    url = str(value).strip()
    if scheme_added(url):
        url = "https://" + url  # a bare host name, as people type it
    shown = redact_credentials(url)
    if shown != url:
        raise ArgumentError(
            "url",
            f"credentials in the URL ({shown}) are not supported: the crawler sends no user "
            "name or password (and writes none to its log or files); give the URL without them",
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ArgumentError(
            "url", f"{shown!r} is not a valid URL ({exc}); expected {accepted}"
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ArgumentError("url", f"{shown!r} is not usable; expected {accepted}")
    if any(c.isspace() for c in url):
        raise ArgumentError("url", f"{shown!r} contains spaces; expected {accepted}")
    if port == 0:
        raise ArgumentError(
            "url",
            f"port 0 in {shown!r} is no port a site is served on; give the site's port "
            "(1-65535), or none for the scheme's own (80 for http, 443 for https)",
        )
    return url


def check_url_length(url: str, limit: int) -> None:
    """A start URL longer than ``URLLENGTH_LIMIT`` (``limit``; 0 = no limit) is refused in
    one line: Scrapy would send no request for it (its ``UrlLengthMiddleware`` drops it),
    and the run would end as if the site were unreachable. Measured as it is requested
    (normalized)."""
    if limit <= 0 or len(url) <= limit:
        return
    try:
        length = len(normalize(url))
    except UrlError:
        length = len(url)
    if length <= limit:
        return
    default = " (Scrapy's default, Internet Explorer's old maximum)"
    raise ArgumentError(
        "url",
        f"{redact_credentials(url)[:50]}… is {length:,} characters long, over "
        f"URLLENGTH_LIMIT: {limit:,}{default if limit == URL_LENGTH_LIMIT else ''}; Scrapy "
        "sends no request for a URL that long — shorten it, or raise -s URLLENGTH_LIMIT",
    )


def input_failure(
    options: RunOptions, url: str, exc: BaseException, maxsize: int = 0
) -> str | None:
    """The run's failure in one line when the fetch of its input ``url`` (the seed, the
    sitemap given, its site's robots.txt) failed for a reason better named than "site
    unreachable": a TLS handshake (``tls_failure_text``), a document over DOWNLOAD_MAXSIZE
    (``maxsize`` when Scrapy's words do not say it). None for any other failure."""
    if getattr(exc, "rule", None) and type(exc).__name__ == "SSRFRefused":
        return str(exc)  # refused by the SSRF guard: <url>: <why> (middlewares/ssrf.py)
    tls = tls_failure_reason(exc)
    if tls is not None:
        return tls_failure_text(options, url, tls)
    too_large = download_cap_text(exc, maxsize)
    if too_large is not None:
        return f"{url} is {too_large} — raise -s DOWNLOAD_MAXSIZE to read it"
    return None


def tls_failure_text(options: RunOptions, url: str, reason: str) -> str:
    """The run's failure when the TLS handshake with its own site failed, in one line: the
    origin and OpenSSL's reason, and — for a URL given without a scheme, read as
    ``https://`` — the plain-HTTP spelling to try."""
    text = f"TLS handshake failed with {origin_of(url)}/ ({reason})"
    if options.scheme_added and options.url.startswith("https://"):
        text += f" — if the site serves plain HTTP, try -a url=http://{options.url[8:]}"
    return text


_JOB_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")


@dataclass(frozen=True)
class RunOptions:
    """Everything a run was asked to do, from its spider arguments."""

    url: str
    input_kind: str
    mode: str = "auto"
    profile: str = "default"
    out: str | None = None
    max_pages: int | None = None
    max_depth: int | None = None
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    cap: int | None = None
    all: bool = False
    pages: tuple[str, ...] = ()
    single: bool = False
    refresh: tuple[str, ...] = ()
    refresh_all: bool = False
    junk_filter: bool = True
    render: str = "never"
    verify: bool = False
    job: str | None = None  # distributed mode (REDIS_URL): the job this worker joins
    scheme_added: bool = False  # given without a scheme: read as https://
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_arguments(cls, args: dict[str, object], profiles: tuple[str, ...]) -> RunOptions:
        """Validate ``-a`` arguments; raise ``ArgumentError`` on the first bad one."""
        args = dict(args)
        raw = args.pop("url", None)
        url = validate_url(raw)
        opts: dict[str, object] = {
            "url": url,
            "input_kind": input_kind(url),
            "scheme_added": scheme_added(raw),
        }
        mode = str(args.pop("mode", "auto")).strip().lower()
        if mode not in MODES:
            raise ArgumentError(
                "mode", f"{mode!r} is not a mode; expected one of {', '.join(MODES)}"
            )
        opts["mode"] = mode
        profile = str(args.pop("profile", "default")).strip().lower()
        if profile not in profiles:
            raise ArgumentError(
                "profile", f"{profile!r} is not a profile; expected one of {', '.join(profiles)}"
            )
        opts["profile"] = profile
        if "out" in args:
            out = str(args.pop("out")).strip()
            if not out:
                raise ArgumentError("out", "expected a folder path, got an empty value")
            opts["out"] = out
        for name, low, high in (("max_pages", 1, None), ("max_depth", 0, None), ("cap", 1, None)):
            if name in args:
                opts[name] = _int(name, args.pop(name), low, high)
        for name in ("include_paths", "exclude_paths"):
            if name in args:
                opts[name] = _paths(args.pop(name))
        for name in ("pages", "refresh"):
            if name in args:
                opts[name] = tuple(s.strip() for s in str(args.pop(name)).split(",") if s.strip())
        for name in ("all", "single", "refresh_all", "junk_filter", "verify"):
            if name in args:
                opts[name] = _flag(name, args.pop(name))
        if opts.get("verify") and mode == "links":
            raise ArgumentError(
                "verify",
                "mode=links reads no sitemap, so nothing is listed to verify; "
                "use mode=union (its crawl answers for the listed pages) or mode=sitemap",
            )
        if "job" in args:
            job = str(args.pop("job")).strip()
            if not _JOB_NAME.fullmatch(job):
                raise ArgumentError("job", f"{job!r}: 1-100 letters, digits, '.', '_' or '-'")
            opts["job"] = job
        if "render" in args:
            render = str(args.pop("render")).strip().lower()
            if render not in RENDER:
                raise ArgumentError("render", f"{render!r}; expected one of {', '.join(RENDER)}")
            opts["render"] = render
        # Scrapyd passes its own arguments with a leading underscore (``_job``).
        extra = {k: str(v) for k, v in args.items() if k.startswith("_")}
        unknown = sorted(k for k in args if not k.startswith("_"))
        if unknown:
            known = ", ".join(
                sorted(
                    f
                    for f in cls.__dataclass_fields__
                    if f not in ("extra", "input_kind", "scheme_added")
                )
            )
            raise ArgumentError(unknown[0], f"unknown argument; known arguments are {known}")
        opts["extra"] = extra
        return cls(**opts)  # type: ignore[arg-type]


# The inventory in the out folder when no feed is given (spiders/base.py, api.py).
INVENTORY_NAME = "inventory.jsonl"


def default_out_dir(url: str) -> Path:
    """``./discovery/<host>/``: where a run keeps its files when ``-a out=`` is not given."""
    host = re.sub(r"[^A-Za-z0-9._-]", "_", host_of(url)) or "site"
    return Path("discovery") / host


def out_dir_of(options: RunOptions) -> Path:
    """The run's out folder: ``-a out=``, else ``default_out_dir``."""
    return Path(options.out) if options.out else default_out_dir(options.url)


def check_budget_limits(options: RunOptions, profile: dict[str, object]) -> None:
    """A profile may cap the budgets (``service``: ``BFS_MAX_PAGES_LIMIT``,
    ``BFS_MAX_DEPTH_LIMIT``): ``-a`` values above the cap are refused in one line."""
    for name, key in (("max_pages", "BFS_MAX_PAGES_LIMIT"), ("max_depth", "BFS_MAX_DEPTH_LIMIT")):
        limit = profile.get(key)
        value = getattr(options, name)
        if limit and value is not None and value > limit:
            raise ArgumentError(
                name, f"profile {options.profile} allows at most {limit}, got {value}"
            )
