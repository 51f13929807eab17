"""Downloader middlewares: throttle, robots policy, refusal classification, SSRF guard."""
