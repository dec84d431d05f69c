"""Converters from corpus formats to spaCy `.spacy` files (DocBin).

Each converter keeps the corpus's own tokenization and reports everything it
could not carry over, with counts and the reason, so nothing is dropped
silently.
"""
