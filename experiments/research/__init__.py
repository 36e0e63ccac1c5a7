"""Research commands: questions about the baselines, not part of the product (`docs/research-log.md`)."""
