"""The sitemap format registry (``sitemaps.formats``, the contract in ``sitemaps.reading``):
each built-in reader is chosen for its kind of document, readers are chosen once per
document, and a format registered from outside (here: a JSON list, in this file only) is
read without any change to ``sitemaps.parser``."""

from __future__ import annotations

import json
import pkgutil

import pytest

from discovery_crawler.sitemaps import formats
from discovery_crawler.sitemaps import parser as parser_module
from discovery_crawler.sitemaps.parser import ParseResult, iter_sitemap, iter_sitemap_batches
from discovery_crawler.sitemaps.reading import Declined, Entry, Head, Reader, batched

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urlset(blocks: str) -> bytes:
    return f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">\n{blocks}</urlset>\n'.encode()


def plain_blocks(count: int) -> str:
    return "".join(f"<url><loc>https://example.com/p/{i:05d}</loc></url>\n" for i in range(count))


DOCUMENTS = {
    "plain urlset": (urlset(plain_blocks(3)), ("plain urlset", "xml"), ["plain urlset"], "urlset"),
    "urlset with a DTD": (
        b'<?xml version="1.0"?><!DOCTYPE urlset><urlset xmlns="' + NS.encode() + b'">'
        b"<url><loc>https://example.com/a</loc></url></urlset>",
        ("xml",),
        ["xml"],
        "urlset",
    ),
    "odd urlset": (
        urlset("<url><lastmod>2024-01-01</lastmod><loc>https://example.com/a</loc></url>"),
        ("plain urlset", "xml"),
        ["plain urlset", "xml"],  # the fast path declines; the XML reader reads it
        "urlset",
    ),
    "sitemapindex": (
        f'<sitemapindex xmlns="{NS}"><sitemap><loc>https://example.com/s.xml</loc></sitemap>'
        "</sitemapindex>".encode(),
        ("xml",),
        ["xml"],
        "sitemapindex",
    ),
    "rss": (
        b'<rss version="2.0"><channel><item><link>https://example.com/a</link></item>'
        b"</channel></rss>",
        ("xml",),
        ["xml"],
        "rss",
    ),
    "atom": (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://example.com/a"/>'
        b"</entry></feed>",
        ("xml",),
        ["xml"],
        "atom",
    ),
    "text": (b"https://example.com/a\nhttps://example.com/b\n", ("text",), ["text"], "text"),
    "empty": (b" \r\n", (), [], "empty"),
}


@pytest.fixture
def watched(monkeypatch):
    """Every registered reader wrapped to record its claims and reads, per document."""
    calls: list[tuple[str, str]] = []

    def watch(reader: Reader) -> Reader:
        def claims(head: Head) -> bool:
            calls.append(("claims", reader.name))
            return reader.claims(head)

        def read(body, result, batch_size, url):
            calls.append(("read", reader.name))
            return reader.read(body, result, batch_size, url)

        return reader._replace(claims=claims, read=read)

    monkeypatch.setattr(formats, "_readers", [watch(reader) for reader in formats.readers()])
    return calls


@pytest.mark.parametrize("name", DOCUMENTS)
def test_each_reader_is_chosen_for_its_documents(name, watched):
    """Each built-in reader claims its kind of document and reads it; the general readers
    claim what the fast path claims, to read what it declines."""
    data, claimed, read, fmt = DOCUMENTS[name]
    head = Head.of(data)
    assert tuple(reader.name for reader in formats.choose(head)) == claimed
    watched.clear()
    result = ParseResult()
    entries = list(iter_sitemap(data, "https://example.com/sitemap.xml", result=result))
    assert [reader for call, reader in watched if call == "read"] == read
    assert result.format == fmt
    assert all(entry.loc.startswith("https://example.com/") for entry in entries)


def test_readers_are_chosen_once_per_document(watched):
    """Claims are asked once per document, however many batches it yields, and a reader
    declining in the middle of it (its second window) does not ask them again."""
    odd = "<url><lastmod>2024-01-01</lastmod><loc>https://example.com/odd</loc></url>\n"
    blocks = plain_blocks(12000)
    cut = blocks.index("<url><loc>https://example.com/p/10000")
    assert cut > parser_module._WINDOW
    data = urlset(blocks[:cut] + odd + blocks[cut:])
    batches = list(iter_sitemap_batches(data, ParseResult(), 100))
    assert len(batches) > 50
    assert len(batches[0][0]) == 5 and len(batches[-1][0]) == 6  # fast path, then lxml
    claims = [reader for call, reader in watched if call == "claims"]
    assert sorted(claims) == sorted(reader.name for reader in formats.readers())
    assert [reader for call, reader in watched if call == "read"] == ["plain urlset", "xml"]
    locs = [row[0] for batch in batches for row in batch]
    assert len(locs) == 12001 == len(set(locs))


def test_fast_false_leaves_out_the_fast_path(watched):
    list(iter_sitemap_batches(urlset(plain_blocks(3)), ParseResult(), fast=False))
    assert [reader for call, reader in watched if call == "read"] == ["xml"]


def test_every_module_of_the_package_is_a_registered_reader():
    """Adding a format is adding a module to ``sitemaps/formats/``: it is registered."""
    modules = {info.name for info in pkgutil.iter_modules(formats.__path__)}
    assert modules == {"plain_urlset", "text", "xml"}
    registered = {reader.read.__module__.rpartition(".")[2] for reader in formats.readers()}
    assert registered == modules
    orders = [(reader.order, reader.name) for reader in formats.readers()]
    assert orders == sorted(orders)


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        formats.register(formats.readers()[0])


@pytest.mark.parametrize(
    ("data", "kind", "root"),
    [
        (b'<?xml version="1.0"?>\n<!-- made by hand -->\n<urlset xmlns="x">', "xml", "urlset"),
        (b"\xef\xbb\xbf <?xml-stylesheet href='a.xsl'?><RSS version='2.0'>", "xml", "rss"),
        (b"<!DOCTYPE feed [<!ENTITY a 'b'>]><feed>", "xml", "feed"),
        (b'<s:urlset xmlns:s="x">', "xml", "urlset"),
        (b"<!-- a comment the head does not hold the end of", "xml", None),
        (b"https://example.com/", "text", None),
        (b"", "empty", None),
    ],
)
def test_head_names_the_root_element(data, kind, root):
    """What a reader may claim a document by, as USP dispatches on the root element."""
    assert Head.of(data)[1:] == (kind, root)


# -- a format from outside: a JSON list of locations ---------------------------------------


def _json_claims(head: Head) -> bool:
    return head.kind == "text" and head.data.lstrip()[:1] == b"["


def _json_read(body, result, batch_size, url):
    result.format = "json"
    locs = json.loads(body.read())
    result.urls = len(locs)
    return batched((Entry(loc) for loc in locs), result, batch_size)


JSON_LIST = Reader("json list", order=50, claims=_json_claims, read=_json_read)


@pytest.fixture
def json_list():
    formats.register(JSON_LIST)
    yield JSON_LIST
    formats.unregister(JSON_LIST.name)


def test_a_registered_format_is_read_without_changing_the_parser(json_list):
    """A reader registered from outside is chosen for its documents (before the text
    reader, by its order) and gives the parser's one entry shape."""
    data = b'["https://example.com/a", "/b"]'
    assert [reader.name for reader in formats.choose(Head.of(data))] == ["json list", "text"]
    result = ParseResult()
    entries = list(iter_sitemap(data, "https://example.com/sitemap.json", result=result))
    assert entries == [Entry("https://example.com/a"), Entry("https://example.com/b")]
    assert (result.format, result.urls, result.malformed_count) == ("json", 2, 0)


def test_an_unregistered_format_is_text_again(json_list):
    formats.unregister(json_list.name)
    result = ParseResult()
    assert list(iter_sitemap(b'["https://example.com/a"]', result=result)) == []
    assert (result.format, result.malformed_count) == ("text", 1)
    formats.register(json_list)  # for the fixture's clean-up


def test_a_reader_that_declines_hands_on_without_repeating_rows():
    """Any reader may decline after rows: the next one claiming the document reads it from
    the start, the rows already yielded left out, its counts alone kept."""

    def read(body, result, batch_size, url):
        result.urls = 99
        result.add_malformed("counted by the reader that declined")
        yield [Entry(body.readline().decode().strip())]
        raise Declined

    hasty = Reader("hasty", order=1, claims=lambda head: head.kind == "text", read=read)
    formats.register(hasty)
    try:
        result = ParseResult()
        data = b"https://example.com/a\nhttps://example.com/b\nnot a url\n"
        batches = list(iter_sitemap_batches(data, result, 1))
    finally:
        formats.unregister(hasty.name)
    assert [batch[0][0] for batch in batches] == ["https://example.com/a", "https://example.com/b"]
    assert (result.format, result.urls, result.malformed) == ("text", 2, ["not a url"])
