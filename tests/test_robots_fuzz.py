"""The robots policy under hostile input, briefly (``bench/fuzz.py robots`` runs the same
for minutes): any status and any bytes build a policy and a JSON record without raising; a
verdict is a pure function of the file and the URL; it is Protego's, with a disallow rule of
the applicable group as its reason and the explainer's deciding rule agreeing; the batch
verdicts are ``check``'s. Each input is checked under a CPU-time bound (a hang fails).
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings

from tests.fuzzing import RobotsCase, check_robots, cpu_bound, robots_cases

BOUND = 5.0  # CPU seconds an input may take


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(robots_cases())
# Found by the fuzzer: a Sitemap line urljoin cannot join (an unclosed IPv6 literal) made
# building the policy raise ValueError.
@example(RobotsCase(200, b"sitemap: http://[bad/\nUser-agent: *", 500 * 1024, ["/robots.txt"]))
def test_hostile_robots_files_give_pure_explained_verdicts(case):
    with cpu_bound(BOUND):
        check_robots(case)


def test_a_sitemap_line_that_is_no_url_is_left_out():
    """Regression (fuzzer): ``Sitemap: http://[bad/`` is skipped, the other lines kept."""
    from discovery_crawler.robots import RobotsPolicy

    body = b"Sitemap: http://[bad/\nSitemap: /ok.xml\nUser-agent: *\nDisallow: /x\n"
    policy = RobotsPolicy.from_text(body, url="https://example.com/robots.txt")
    assert policy.sitemaps == ["https://example.com/ok.xml"]
    assert policy.check("https://example.com/x") == (False, "Disallow: /x")
