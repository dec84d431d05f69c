"""Converters from corpus formats to spaCy `.spacy` files (DocBin).

Each converter keeps the corpus's own tokenization and reports everything it
could not carry over, with counts and the reason, so nothing is dropped
silently.
"""
import gzip
from pathlib import Path
from typing import TextIO


#: what a record with a field of the wrong type or value raises deep in the
#: converters (json gives any type); each is reported naming the line
FIELD_ERRORS = (TypeError, ValueError, KeyError, AttributeError)


def wrong_field(where: str, err: Exception) -> str:
    """The message for a record whose field broke the conversion."""
    return f"{where}: a field has the wrong type or value ({type(err).__name__}: {err})"


def open_text(path: Path) -> TextIO:
    """A corpus file for reading as UTF-8 text, gzipped when it ends in .gz;
    a byte-order mark at its start (some editors write one) is skipped."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return open(path, encoding="utf-8-sig")
