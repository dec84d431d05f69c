"""The records of a corpus to annotate: JSONL (`{"id", "text", ...}`, the
other fields carried through) or plain text (one document per line, its id
the file and line), gzipped or not, from a file, a folder or a glob.

A record that cannot be annotated (not UTF-8, not JSON, no text, longer than
the limit) is not dropped: it comes out as a `BadRecord` with its id and
the reason, for the errors file.
"""
from __future__ import annotations

import glob
import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple, Union

#: the file endings read as JSONL (the rest is plain text)
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz")


@dataclass
class Record:
    """One document: its id, its text and the input's other fields."""

    id: str
    text: str
    fields: Dict[str, Any] = field(default_factory=dict)


@dataclass
class BadRecord:
    """A record that cannot be annotated, and why."""

    id: str
    reason: str


Item = Union[Record, BadRecord]


def input_files(spec: str) -> List[Path]:
    """The files an INPUT names: a file, a folder (every file in it, sorted,
    recursively) or a glob; a ValueError when it names none."""
    path = Path(spec)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
    else:
        files = sorted(Path(p) for p in glob.glob(spec, recursive=True) if Path(p).is_file())
    if not files:
        raise ValueError(f"annotate: the input {spec!r} names no file (a file, a folder or a glob)")
    return files


def _lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        for line in f:
            yield line.rstrip(b"\r\n")


#: one non-empty input line: (file name, line number, whether JSONL, its bytes)
RawLine = Tuple[str, int, bool, bytes]


def raw_lines(files: List[Path]) -> Iterator[RawLine]:
    """Every non-empty line of the files in order, unparsed: what the driver
    reads and cuts into shards (the parsing is the workers')."""
    for path in files:
        jsonl = path.name.endswith(JSONL_SUFFIXES)
        for number, raw in enumerate(_lines(path), start=1):
            if raw.strip():
                yield path.name, number, jsonl, raw


def parse_line(line: RawLine, max_chars: int) -> Item:
    """A line as a `Record`, or a `BadRecord` with its id and why.

    max_chars: longer texts are bad records (a spaCy doc of millions of
        characters would take the memory of many).
    """
    name, number, jsonl, raw = line
    where = f"{name}:{number}"
    try:
        text_line = raw.decode("utf8")
    except UnicodeDecodeError as err:
        return BadRecord(where, f"not UTF-8 (byte {err.start} of the line is {raw[err.start:err.start + 1]!r})")
    if jsonl:
        try:
            data = json.loads(text_line)
        except json.JSONDecodeError as err:
            return BadRecord(where, f"not JSON ({err.msg} at character {err.pos})")
        if not isinstance(data, dict):
            return BadRecord(where, "not a JSON object")
        record_id = str(data.get("id", where))
        text = data.get("text")
        fields = {k: v for k, v in data.items() if k not in ("id", "text")}
    else:
        record_id, text, fields = where, text_line, {}
    if not isinstance(text, str) or not text.strip():
        return BadRecord(record_id, "no text (a non-empty string under 'text')")
    if len(text) > max_chars:
        return BadRecord(record_id, f"{len(text):,} characters, over the limit of {max_chars:,} (--max-chars)")
    return Record(record_id, text, fields)
