"""The pretraining text of the benches (tools/bench/raw_text.py): a line per
record, tokens joined by spaces, and every skipped record counted."""
import gzip
import json

import pytest

from tools.bench.raw_text import line_text, write_raw_text


def test_a_record_gives_its_text_else_its_tokens_joined():
    assert line_text({"text": "IL-2 gene expression"}) == "IL-2 gene expression"
    assert line_text({"tokens": ["human", "and", "mouse", "CD19", "genes"]}) == "human and mouse CD19 genes"
    assert line_text({"id": "x"}) == ""
    assert line_text({"tokens": "not a list"}) == ""


def test_every_record_with_text_is_written_and_the_others_counted(tmp_path):
    genia = tmp_path / "genia.jsonl.gz"
    with gzip.open(genia, "wt") as f:
        f.write(json.dumps({"id": "a", "tokens": ["c-fos", "and", "c-jun"]}) + "\n\n")
        f.write(json.dumps({"id": "b", "tokens": []}) + "\n")
    craft = tmp_path / "craft.jsonl"
    craft.write_text(json.dumps({"id": "c", "text": "Intraocular pressure"}) + "\n")
    output = tmp_path / "out" / "raw.jsonl"
    written, skipped = write_raw_text([genia, craft], output)
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert lines == [{"text": "c-fos and c-jun"}, {"text": "Intraocular pressure"}]
    assert written == 2
    assert skipped == {"genia.jsonl.gz: no text or tokens": 1}


def test_a_line_that_is_not_json_names_its_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{not json\n')
    with pytest.raises(ValueError, match="bad.jsonl, line 2: not JSON"):
        write_raw_text([bad], tmp_path / "raw.jsonl")


def test_unlabelled_docs_keep_words_and_spaces_and_nothing_else(tmp_path):
    import spacy
    from spacy.tokens import Doc, DocBin

    from spacy_struct.annotations import register_extensions
    from tools.bench.raw_text import write_unlabelled_docs

    register_extensions()
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["human", "and", "mouse", "genes", "."], spaces=[True, True, True, False, False])
    doc._.segments = [("DNA", [(0, 1), (3, 4)])]
    doc.spans["sc"] = [doc[2:4]]
    source = tmp_path / "in.spacy"
    DocBin(docs=[doc, Doc(vocab, words=[])], store_user_data=True).to_disk(source)
    assert write_unlabelled_docs([source], tmp_path / "out.spacy") == 1
    (out,) = DocBin().from_disk(tmp_path / "out.spacy").get_docs(vocab)
    assert out.text == doc.text and [t.text for t in out] == [t.text for t in doc]
    assert not out.user_data and not out.spans
