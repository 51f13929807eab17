"""Downloader middlewares shared by every spider of the project (SPEC §2, §6)."""
