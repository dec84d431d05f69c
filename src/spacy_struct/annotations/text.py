"""How error messages quote a doc: its first characters."""


def text_preview(text: str) -> str:
    """The start of a text, quoted, for error messages."""
    return repr(text[:40] + ("..." if len(text) > 40 else ""))
