"""The held-links store of deterministic admission (``crawling/held.py``): the same
levels in the same order whether it stays in memory or spills to its SQLite file."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discovery_crawler.crawling.held import HeldLinks

PAGES = st.sampled_from(["https://x/", "https://x/a", "https://x/b/é", "https://x/b/z"])
OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "put", "del", "take"]),
        st.integers(0, 30),  # key
        st.integers(1, 3),  # depth
        PAGES,
        st.one_of(st.none(), st.text(max_size=5)),  # anchor
    ),
    max_size=80,
)


def play(store: HeldLinks, ops: list) -> list:
    """Apply ``ops``; what each ``take`` gave, and the size after each step."""
    out: list = []
    place = 0
    for op, n, depth, page, anchor in ops:
        key = f"https://x/k{n}/"
        old = store.get(key)
        if op == "put":
            place += 1
            store.put(key, (depth, page, place, key, anchor), new=old is None)
        elif op == "del" and old is not None:
            del store[key]
        elif op == "take":
            out.append(list(store.take(depth)))
        out.append((len(store), bool(store), old))
    return out


@given(OPS)
def test_a_spilled_store_gives_what_the_dict_gives(ops):
    memory = play(HeldLinks(spill_at=10_000), ops)
    spilled = play(HeldLinks(spill_at=3, chunk=2), ops)
    assert spilled == memory


@given(OPS)
def test_a_level_is_taken_in_found_on_then_place_order(ops):
    store = HeldLinks(spill_at=5, chunk=3)
    reference: dict[str, tuple] = {}
    place = 0
    for op, n, depth, page, anchor in ops:
        key = f"https://x/k{n}/"
        if op == "take":
            want = sorted((f, p, u, k, a) for k, (d, f, p, u, a) in reference.items() if d == depth)
            assert list(store.take(depth)) == want
            reference = {k: v for k, v in reference.items() if v[0] != depth}
        else:
            place += 1
            value = (depth, page, place, key, anchor)
            store.put(key, value, new=key not in reference)
            reference[key] = value
        assert len(store) == len(reference)
