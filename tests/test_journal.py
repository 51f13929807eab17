"""The job journal's file (``journal.py``): what goes in comes out, per fingerprint, in
order; a file cut anywhere (a kill mid-write) keeps exactly its whole entries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from discovery_crawler.journal import ResponseJournal

entries = st.lists(
    st.tuples(st.sampled_from([b"a" * 20, b"b" * 20, b"c" * 20]), st.binary(max_size=300)),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(entries)
def test_responses_come_back_per_fingerprint_in_the_order_they_went_in(tmp_path_factory, items):
    path = tmp_path_factory.mktemp("j") / "responses.journal"
    journal = ResponseJournal(path)
    for fingerprint, body in items:
        journal.append(fingerprint, {"status": 200, "body": body})
    journal.close()
    again = ResponseJournal(path)
    assert len(again) == len(items)
    for fingerprint, body in items:
        assert again.take(fingerprint) == {"status": 200, "body": body}
    assert again.take(b"a" * 20) is None
    assert again.waiting == 0


@settings(max_examples=60, deadline=None)
@given(entries, st.integers(min_value=0, max_value=10_000))
def test_a_file_cut_anywhere_keeps_its_whole_entries_and_drops_the_rest(
    tmp_path_factory, items, cut
):
    path = tmp_path_factory.mktemp("j") / "responses.journal"
    journal = ResponseJournal(path)
    ends = []
    for fingerprint, body in items:
        journal.append(fingerprint, {"body": body})
        ends.append(path.stat().st_size)
    journal.close()
    size = path.stat().st_size
    cut = min(cut, size)
    with path.open("r+b") as fh:
        fh.truncate(cut)
    whole = sum(1 for end in ends if end <= cut)
    again = ResponseJournal(path)
    assert len(again) == whole
    assert again.recovered_bytes == cut - (ends[whole - 1] if whole else 0)
    assert path.stat().st_size == (ends[whole - 1] if whole else 0)
    for fingerprint, body in items[:whole]:
        assert again.take(fingerprint) == {"body": body}
    again.append(b"d" * 20, {"body": b"after"})  # appends where the whole entries end
    again.close()
    assert ResponseJournal(path).take(b"d" * 20) == {"body": b"after"}


def test_a_corrupt_entry_ends_what_is_read(tmp_path):
    path = tmp_path / "responses.journal"
    journal = ResponseJournal(path)
    journal.append(b"x" * 20, {"body": b"one"})
    journal.append(b"y" * 20, {"body": b"two"})
    journal.close()
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # a flipped byte in the second entry: its checksum fails
    path.write_bytes(bytes(data))
    again = ResponseJournal(path)
    assert len(again) == 1
    assert again.take(b"x" * 20) == {"body": b"one"}
    assert again.take(b"y" * 20) is None


def _journal_of(path, items):
    journal = ResponseJournal(path)
    starts = []
    for fingerprint, body in items:
        starts.append(path.stat().st_size)
        journal.append(fingerprint, {"body": body})
    journal.close()
    return starts


def test_a_damaged_entry_mid_file_is_told_and_the_entries_after_it_kept(tmp_path):
    """A bad CRC in the middle (a disk error, another writer): the entry is skipped and
    reported (offset, bytes), the whole entries before and after it are replayed, and new
    entries still append after them."""
    path = tmp_path / "responses.journal"
    items = [(bytes([65 + i]) * 20, f"body {i}".encode() * 50) for i in range(5)]
    starts = _journal_of(path, items)
    raw = bytearray(path.read_bytes())
    raw[starts[2] + 20] ^= 0xFF  # inside the third entry's payload: its CRC fails
    path.write_bytes(bytes(raw))
    again = ResponseJournal(path)
    assert again.damaged == [(starts[2], starts[3] - starts[2])]
    assert again.recovered_bytes == 0
    assert len(again) == 4
    for i, (fingerprint, body) in enumerate(items):
        assert again.take(fingerprint) == (None if i == 2 else {"body": body})
    again.append(b"Z" * 20, {"body": b"after"})
    again.close()
    last = ResponseJournal(path)
    assert last.take(b"Z" * 20) == {"body": b"after"}
    assert len(last.damaged) == 1  # told again while the job lasts, never in silence


@settings(max_examples=80, deadline=None)
@given(entries, st.integers(min_value=0), st.integers(min_value=1, max_value=255))
def test_a_byte_changed_anywhere_never_raises_and_keeps_the_undamaged_entries(
    tmp_path_factory, items, where, flip
):
    path = tmp_path_factory.mktemp("j") / "responses.journal"
    starts = _journal_of(path, items)
    raw = bytearray(path.read_bytes())
    if not raw:
        return
    at = where % len(raw)
    raw[at] ^= flip
    path.write_bytes(bytes(raw))
    again = ResponseJournal(path)
    hit = max(i for i, start in enumerate(starts) if start <= at)
    # every entry but the one the byte fell in comes back, in order
    for fingerprint, body in items[:hit] + items[hit + 1 :]:
        assert again.take(fingerprint) == {"body": body}, hit
    assert again.damaged or again.recovered_bytes or len(again) == len(items)
