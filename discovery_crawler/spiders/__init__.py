"""Spiders: ``discover`` (the entry point; sitemap discovery). The BFS link crawler and
``estimate`` come next."""
