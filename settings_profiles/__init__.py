"""Settings profiles, one module per kind of user (SPEC §1). Select with ``-a profile=NAME``.

Each module sets only what differs from ``discovery_crawler/settings.py``.
"""
