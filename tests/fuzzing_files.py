"""Hypothesis strategies for the files a run reads back (``job.json``, ``_crawl-log.json``,
``state.json``): any JSON value, values close to a valid file's shape, and raw bytes —
what a crash, a disk error, a hand edit or another program can leave there."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def near(valid: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``valid`` with some of its keys given any JSON value, dropped, or a key added."""

    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        data = json.loads(json.dumps(valid))
        for key in draw(st.lists(st.sampled_from(sorted(data)), max_size=3, unique=True)):
            if draw(st.booleans()):
                data[key] = draw(JSON_VALUES)
            else:
                del data[key]
        if draw(st.booleans()):
            data[draw(st.text(max_size=8))] = draw(JSON_VALUES)
        return data

    return build()


def as_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


# a file's content: any JSON value or one near a valid file, cut anywhere, or any bytes
def contents(valid: dict[str, Any]) -> st.SearchStrategy[bytes]:
    whole = (JSON_VALUES | near(valid)).map(as_bytes)
    cut = st.tuples(near(valid).map(as_bytes), st.integers(min_value=0)).map(
        lambda pair: pair[0][: pair[1] % (len(pair[0]) + 1)]
    )
    return whole | cut | st.binary(max_size=200) | st.just(b"[" * 100_000)
