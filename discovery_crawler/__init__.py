"""discovery_crawler: which pages exist on a site, where each came from, which matter."""

__version__ = "0.1.0"
