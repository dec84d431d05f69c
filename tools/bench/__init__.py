"""Benchmarks that print our figure next to a peer's, measured in one run."""
