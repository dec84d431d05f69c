"""CoNLL-U conversion keeps gold tokenization and reports what it drops."""
import re

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_struct.__main__ import main as cli
from spacy_struct.convert.conllu import CoNLLUError, Report, _parse, convert_file, sentences_to_docs

CONLLU = """# sent_id = s1
# text = Don't go there.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t3:aux\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\tMood=Imp\t0\troot\t0:root\t_
3.1\tgo\t_\t_\t_\t_\t_\t_\t3:conj\t_
4\tthere\tthere\tADV\tRB\t_\t3\tadvmod\t3:advmod\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

# sent_id = s2
1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_
"""


def _sentences(text, report=None):
    return list(_parse(text.splitlines(keepends=True), "test.conllu", report or Report()))


def test_words_spaces_and_tree_are_kept():
    report = Report()
    sents = _sentences(CONLLU, report)
    assert [s.words for s in sents] == [["Do", "n't", "go", "there", "."], ["Hi"]]
    docs = list(sentences_to_docs(sents, spacy.blank("en").vocab, n_sents=10))
    assert len(docs) == 1
    doc = docs[0]
    assert doc.text == "Don't go there. Hi"
    assert [t.head.i for t in doc] == [2, 2, 2, 2, 2, 5]
    assert [t.dep_ for t in doc] == ["aux", "advmod", "ROOT", "advmod", "punct", "ROOT"]
    assert [t.tag_ for t in doc][:3] == ["VBP", "RB", "VB"]
    assert [t.pos_ for t in doc][:3] == ["AUX", "PART", "VERB"]
    assert str(doc[2].morph) == "Mood=Imp"
    assert [len(s) for s in doc.sents] == [5, 1]
    # what could not be kept is counted, with the reason
    assert (report.sentences, report.words) == (2, 6)
    assert report.multiword_tokens == 1 and report.empty_nodes == 1
    assert report.enhanced_deps == 0
    text = "\n".join(report.lines())
    assert "1 multiword tokens" in text and "1 empty nodes" in text


def test_enhanced_dependencies_that_differ_are_reported():
    report = Report()
    _sentences(CONLLU.replace("3\taux\t3:aux", "3\taux\t3:aux|5:dep"), report)
    assert report.enhanced_deps == 1
    assert any("enhanced dependencies" in line for line in report.lines())


@pytest.mark.parametrize(
    "edit, message",
    [
        (("4\tthere\tthere\tADV\tRB\t_\t3", "4\tthere\tthere\tADV\tRB\t_\t9"), "outside"),
        (("1\tDo\tdo\tAUX\tVBP\t_\t3", "1\tDo\tdo\tAUX\tVBP\t_\t2"), None),
        (("3\tgo\tgo\tVERB\tVB\tMood=Imp\t0", "3\tgo\tgo\tVERB\tVB\tMood=Imp\t4"), "cycle"),
        (("5\t.\t.\tPUNCT", "6\t.\t.\tPUNCT"), "out of sequence"),
    ],
)
def test_a_sentence_that_is_not_a_tree_is_named(edit, message):
    text = CONLLU.replace(*edit)
    if message is None:       # 1 -> 2 -> 3 is still a tree: no error
        _sentences(text)
        return
    with pytest.raises(CoNLLUError) as err:
        _sentences(text)
    assert message in str(err.value)
    assert "s1" in str(err.value)


def test_wrong_column_count_is_an_error():
    with pytest.raises(CoNLLUError, match="10 tab-separated columns"):
        _sentences("1\tHi\thi\n")


def test_cli_writes_a_docbin(tmp_path):
    src = tmp_path / "x.conllu"
    src.write_text(CONLLU, encoding="utf8")
    out = tmp_path / "x.spacy"
    assert cli(["convert", "conllu", str(src), str(out), "--n-sents", "1", "--lang", "en"]) == 0
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    assert [len(d) for d in docs] == [5, 1]
    report = convert_file(src, out)
    assert report.sentences == 2


def test_cli_reports_a_broken_file(tmp_path, capsys):
    src = tmp_path / "x.conllu"
    src.write_text(CONLLU.replace("\t0\troot\t0:root\t_\n3.1", "\t4\troot\t0:root\t_\n3.1"), encoding="utf8")
    assert cli(["convert", "conllu", str(src), str(tmp_path / "y.spacy")]) == 1
    assert "not a tree" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kind, name, text, message",
    [
        ("conllu", "x.conllu", CONLLU.replace("Mood=Imp", "Imperative"), "x.conllu:6 .*FEATS 'Imperative'"),
        ("conllu", "x.conllu", CONLLU.replace("1-2\tDon't", "1-x\tDon't"), "x.conllu:3 .*multiword token ID '1-x'"),
        ("conllu", "x.conllu", CONLLU.replace("2\tn't\tnot", "2\t\tnot"), "x.conllu:5 .*FORM column is empty"),
        ("conllu", "x.conllu", CONLLU.replace("\t3\tadvmod\t3:advmod", "\t0\troot\t0:root"), "sentence s1 has 2 roots"),
        ("conllu", "x.conllu", CONLLU.replace("\t3\tadvmod\t3:advmod", "\t3\t_\t_"), "x.conllu:8 .*DEPREL is '_'"),
        ("conllu", "x.conllu", CONLLU.replace("\t3\tadvmod\t3:advmod", "\t3\t\t_"), "x.conllu:8 .*DEPREL is ''"),
        ("conllu", "x.conllu", CONLLU.replace("\tADV\t", "\tADVERB\t"), "x.conllu: one of the sentences at line 3, line 12 has a value spaCy refuses"),
        ("spans-jsonl", "x.jsonl", '{"tokens": ["a", "b"], "spans": null}\n', "x.jsonl:1: 'spans' must be a list"),
        ("ptb", "x.trees", "(TOP (S (ADVP|PRT (RB up)) (VBD went)))\n", "x.trees:1: label 'ADVP|PRT'"),
        ("joint-jsonl", "x.jsonl", '{"tokens": ["a"], "tree": 5}\n', "x.jsonl:1: a field has the wrong type"),
        ("joint-jsonl", "x.jsonl", '{"tokens": ["a", "b"], "tree": "(S (N a) (N b))", "spans": '
                                    '[{"start": 0.5, "end": 2, "label": "X"}]}\n', "x.jsonl:1: entity 0 is not"),
        ("craft", "x.jsonl", '{"tokens": ["a", "b"], "char_offsets": [[0, 1], [2, 3]], "tags": [1, 2], '
                             '"spans": []}\n', "line 1: 'tags' must be a list of strings"),
    ],
)
def test_malformed_input_is_named_by_file_and_line(tmp_path, capsys, kind, name, text, message):
    src = tmp_path / name
    src.write_text(text, encoding="utf8")
    assert cli(["convert", kind, str(src), str(tmp_path / "y.spacy")]) == 1
    assert re.search(message, capsys.readouterr().err), message


def test_a_byte_order_mark_and_double_spaces_are_read_as_text(tmp_path):
    src = tmp_path / "x.conllu"
    src.write_text("\ufeff" + CONLLU, encoding="utf8")
    assert cli(["convert", "conllu", str(src), str(tmp_path / "y.spacy")]) == 0
    sig = tmp_path / "eng.sentence.train.tsv"
    sig.write_text("the  walkers\tthe walk @@er @@s\n", encoding="utf8")
    assert cli(["convert", "sigmorphon", str(sig), str(tmp_path / "z.spacy")]) == 0
    doc = next(DocBin().from_disk(tmp_path / "z.spacy").get_docs(spacy.blank("en").vocab))
    assert [t.text for t in doc] == ["the", "walkers"]
