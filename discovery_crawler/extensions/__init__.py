"""Extensions: the progress line and the end-of-run summary; the collector tuned for a crawl."""
