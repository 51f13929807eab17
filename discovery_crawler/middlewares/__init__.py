"""Downloader middlewares shared by every spider: robots policy, per-host throttle,
refusal classification."""
