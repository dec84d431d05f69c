"""Unlabelled text for `spacy pretrain`, from the corpora's JSONL files.

`spacy pretrain` reads JSONL lines of {"text": ...} (`spacy.JsonlCorpus.v1`)
and cuts them with the pipeline's own tokenizer. The corpora hold sentences
as token lists (GENIA, CRAFT), so a line's text is its tokens joined by
spaces: the tokenizer, which cuts biomedical text as GENIA does, then gives
back nearly the same tokens. Only train files should be given: pretraining
on dev text would let dev's words shape the weights the dev score judges.

`write_unlabelled_docs` gives the same kind of text as docs of the
corpus's own tokens with no annotation, for teacher scores
(`python -m spacy_struct teach`) that a student learns from alone there."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterable, Tuple

from spacy_struct.convert import open_text

from .split import open_for_writing


def line_text(record: Dict) -> str:
    """The text of one corpus record: its "text", else its "tokens" joined
    by spaces; "" when it has neither."""
    text = record.get("text")
    if isinstance(text, str):
        return text
    tokens = record.get("tokens")
    if isinstance(tokens, list) and all(isinstance(t, str) for t in tokens):
        return " ".join(tokens)
    return ""


def write_raw_text(sources: Iterable[Path], output: Path) -> Tuple[int, Dict[str, int]]:
    """Write one {"text": ...} line per record of the JSONL `sources` to
    `output` (gzipped when its name ends in .gz).

    RETURNS: (lines written, {reason: records skipped}); a record is skipped
    only when it holds no text (no "text" and no list of "tokens", or an
    empty one), and counted so the caller can say so."""
    written, skipped = 0, {}
    with open_for_writing(output) as out:
        for source in sources:
            with open_text(source) as f:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as error:
                        raise ValueError(f"{source}, line {number}: not JSON ({error})") from None
                    text = line_text(record) if isinstance(record, dict) else ""
                    if not text.strip():
                        reason = f"{source.name}: no text or tokens"
                        skipped[reason] = skipped.get(reason, 0) + 1
                        continue
                    out.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
                    written += 1
    return written, skipped


def write_unlabelled_docs(sources: Iterable[Path], output: Path) -> int:
    """The docs of the .spacy `sources` with their words, spaces and
    sentence starts alone (no spans, segments or other annotation) to `output`: unlabelled text
    in the corpus's own tokens, for teacher scores
    (`python -m spacy_struct teach`) and a student that learns from them.
    RETURNS: docs written (empty docs are left out)."""
    import spacy
    from spacy.tokens import Doc, DocBin

    vocab = spacy.blank("xx").vocab
    out = DocBin()
    for source in sources:
        for doc in DocBin().from_disk(source).get_docs(vocab):
            if len(doc):
                starts = [bool(t.is_sent_start) for t in doc] if doc.has_annotation("SENT_START") else None
                out.add(Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
                            sent_starts=starts))
    output.parent.mkdir(parents=True, exist_ok=True)
    out.to_disk(output)
    return len(out)
