"""Extensions: the progress line and the end-of-run summary."""
