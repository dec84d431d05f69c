"""spacy_struct.SentenceDocs.v1: one example per Doc, gold tokens and sentences."""
import spacy
from spacy.tokens import Doc, DocBin

from spacy_struct.corpus import SentenceDocs


def test_the_predicted_doc_gets_the_gold_tokens_and_sentences(tmp_path):
    nlp = spacy.blank("en")
    one = Doc(nlp.vocab, words="Cells ( e.g . T cells ) grew .".split())  # no boundaries: one sentence
    two = Doc(nlp.vocab, words="It grew . It died .".split(), sent_starts=[True, False, False, True, False, False])
    one.user_data["kept"] = 1
    db = DocBin(store_user_data=True)
    db.add(one)
    db.add(two)
    db.to_disk(tmp_path / "x.spacy")
    examples = list(SentenceDocs(tmp_path / "x.spacy", gold_preproc=True)(nlp))
    assert len(examples) == 2
    assert [t.text for t in examples[0].predicted] == [t.text for t in one]
    assert [s.text for s in examples[0].predicted.sents] == [one.text.strip()]  # not cut at "e.g ."
    assert [s.text for s in examples[1].predicted.sents] == ["It grew .", "It died ."]
    assert examples[0].reference.user_data["kept"] == 1
