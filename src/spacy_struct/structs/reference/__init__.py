"""Readable numpy references of every structure: the oracle for the tests and the baseline for `python -m spacy_struct.bench structs`."""
