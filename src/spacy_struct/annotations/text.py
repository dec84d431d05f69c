"""How error messages name a doc: its first characters, read only when a
message is written (annotations are read on every extension call and every
training example, and doc.text costs the doc's length)."""


def text_preview(text: str) -> str:
    """The start of a text, quoted, for error messages."""
    return repr(text[:40] + ("..." if len(text) > 40 else ""))


class DocWhere:
    """`what` and the doc's preview, e.g. "segment 3 of the doc 'BMP2 and ...'",
    formatted when the message is."""

    __slots__ = ("doc", "what")

    def __init__(self, doc, what: str) -> None:
        self.doc, self.what = doc, what

    def __str__(self) -> str:
        return f"{self.what} {text_preview(self.doc.text)}"
