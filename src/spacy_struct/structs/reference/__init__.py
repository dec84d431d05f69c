"""Readable numpy references of every structure: the oracle for the tests and the baseline for `python -m tools.bench structs`."""
