"""The joint_parser component: training, prediction, serialization, settings,
errors, and the treebank converters."""
import json
import warnings
from collections import Counter

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span, SpanGroup
from spacy.training import Example

from conftest import SAMPLE, SMALL_SPAN_SCORER as SMALL_MODEL, train_in_batches
from spacy_struct.convert.treebanks import TreebankError, convert_joint_jsonl, convert_ptb
from spacy_struct.joint_parser import parse_brackets, set_parse, tree_of
from spacy_struct.annotations.brackets import constituents



def _examples(nlp, name="joint_train.spacy", limit=None):
    docs = list(DocBin().from_disk(SAMPLE / name).get_docs(nlp.vocab))[:limit]
    return [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d)
            for d in docs]


def _train(nlp, examples, epochs=6, seed=0):
    return train_in_batches(nlp, examples, epochs, seed)


@pytest.fixture(scope="module")
def trained():
    nlp = spacy.blank("en")
    nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL})
    return _train(nlp, _examples(nlp))


@pytest.mark.slow
def test_joint_parser_learns_trees_and_entities_in_them(trained):
    scores = trained.evaluate(_examples(trained, "joint_dev.spacy"))
    assert scores["constituents_f"] > 0.9 and scores["spans_sc_f"] > 0.9
    assert trained.get_pipe("joint_parser").labels  # chart labels, joint ones among them
    assert any("|" in label for label in trained.get_pipe("joint_parser").labels)


@pytest.mark.slow
def test_raw_text_gets_a_tree_per_sentence_and_entities(trained):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rule-sentence warning
        doc = trained("Expression of the IL-2 gene was studied in human lymphocytes. "
                      "STAT3 binds the c-fos promoter in Jurkat cells.")
    roots = [(s, e) for s, e, _ in _nodes(doc) if not any(a <= s and e <= b and (a, b) != (s, e)
                                                         for a, b, _ in _nodes(doc))]
    first_stop = next(t.i for t in doc if t.text == ".")
    assert roots == [(0, first_stop + 1), (first_stop + 1, len(doc))]
    assert [(s.start, s.end) for s in doc.sents] == roots  # the parsed sentences become the doc's
    assert doc[0:first_stop + 1]._.parse_string.startswith("(S ")
    ents = {(s.text, s.label_) for s in doc.spans["sc"]}
    assert ("IL-2 gene", "DNA") in ents and ("IL-2", "protein") in ents


def _nodes(doc):
    from spacy_struct.annotations.trees import constituent_labels
    return constituent_labels(doc)


@pytest.mark.slow
def test_whitespace_is_never_an_entity_edge(trained, monkeypatch):
    """Even when the scores favour entities everywhere, none starts or ends
    on a whitespace token."""
    parser = trained.get_pipe("joint_parser")
    entity = [k for k, (kind, _) in enumerate(parser.label_parts.parts) if kind == "entity"]
    assert entity
    score_docs = parser.score_docs

    def entities_everywhere(docs):
        docs, batch, scores = score_docs(docs)
        for S in scores:
            S[:, :, entity] += 50.0
        return docs, batch, scores

    monkeypatch.setattr(parser, "score_docs", entities_everywhere)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = trained("IL-2 and  c-fos are observed in lymphocytes .  \n\n  STAT3 binds DNA . ")
    assert doc.spans["sc"]
    assert all(not s[0].is_space and not s[-1].is_space for s in doc.spans["sc"])


@pytest.mark.slow
def test_predictions_round_trip_through_disk_bytes_and_two_processes(trained, tmp_path):
    texts = [eg.reference.text for eg in _examples(trained, "joint_dev.spacy", limit=12)]
    before = [d[:]._.parse_string for d in trained.pipe(texts)]
    trained.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert [d[:]._.parse_string for d in loaded.pipe(texts)] == before
    again = spacy.blank("en")
    again.add_pipe("joint_parser", config={"model": SMALL_MODEL})
    again.from_bytes(trained.to_bytes())
    assert [d[:]._.parse_string for d in again.pipe(texts)] == before
    assert [d[:]._.parse_string for d in loaded.pipe(texts, n_process=2)] == before


@pytest.mark.slow
def test_settings_given_at_load_time_are_used(trained, tmp_path):
    trained.to_disk(tmp_path / "nlp")
    nlp = spacy.load(tmp_path / "nlp", config={"components": {"joint_parser": {"set_ents": True}}})
    doc = nlp("Expression of the IL-2 gene was studied in human lymphocytes .")
    assert doc.ents and all(any(e.start == s.start and e.end == s.end for s in doc.spans["sc"]) for e in doc.ents)


@pytest.mark.slow
def test_a_saved_model_keeps_the_label_parts_it_was_trained_with(trained, tmp_path):
    """factor_labels shapes the model: a load-time config cannot change it
    (a warning says so), and a pipeline saved before the setting existed
    scores whole labels."""
    parser = trained.get_pipe("joint_parser")
    assert parser.cfg["factor_labels"] and parser.label_parts.factored
    assert parser.model.get_ref("output").get_dim("nO") == parser.label_parts.n_parts > len(parser.labels) - 1
    texts = [eg.reference.text for eg in _examples(trained, "joint_dev.spacy", limit=5)]
    before = [d[:]._.parse_string for d in trained.pipe(texts)]
    trained.to_disk(tmp_path / "nlp")
    with pytest.warns(UserWarning, match="factor_labels = False in the config, but the saved model was trained with"):
        nlp = spacy.load(tmp_path / "nlp", config={"components": {"joint_parser": {"factor_labels": False}}})
    assert nlp.get_pipe("joint_parser").cfg["factor_labels"] is True
    assert [d[:]._.parse_string for d in nlp.pipe(texts)] == before

    whole = spacy.blank("en")
    whole.add_pipe("joint_parser", config={"model": SMALL_MODEL, "factor_labels": False, "entity_loss_weight": 0})
    _train(whole, _examples(whole, limit=10), epochs=1)
    assert whole.get_pipe("joint_parser").model.get_ref("output").get_dim("nO") == len(whole.get_pipe("joint_parser").labels)
    whole.to_disk(tmp_path / "whole")
    cfg_file = tmp_path / "whole" / "joint_parser" / "cfg"
    cfg = json.loads(cfg_file.read_text())
    del cfg["factor_labels"], cfg["entity_loss_weight"]  # as saved before the settings existed
    cfg_file.write_text(json.dumps(cfg))
    config_file = tmp_path / "whole" / "config.cfg"
    config_file.write_text("".join(line for line in config_file.read_text().splitlines(keepends=True)
                                   if not line.startswith("entity_loss_weight")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = spacy.load(tmp_path / "whole", config={"components": {"joint_parser": {"factor_labels": True}}})
    assert old.get_pipe("joint_parser").cfg["factor_labels"] is False
    assert old.get_pipe("joint_parser").cfg["entity_loss_weight"] == 1.0  # the default now; it predicts
    with pytest.raises(ValueError, match="set entity_loss_weight = 0 \\(or train a new model"):
        old.update(_examples(old, limit=2))  # but cannot go on training with the entity loss
    assert old(texts[0])[:]._.parse_string == whole(texts[0])[:]._.parse_string


@pytest.mark.slow
def test_the_bench_scores_the_entities_by_where_they_sit_in_the_gold_tree(trained, tmp_path):
    from tools.bench.joint import PLACES, entity_places, evaluate, format_table
    from tools.bench.systems import System

    trained.to_disk(tmp_path / "nlp")
    system = System("ours", tmp_path / "nlp")
    examples = evaluate([system], SAMPLE / "joint_dev.spacy", repeats=1)
    # the places agree with the converter's count of the same file
    report = convert_joint_jsonl(SAMPLE / "sample-joint-dev.jsonl", tmp_path / "dev.spacy").joined
    counted = Counter(place for found in entity_places(examples) for place in found.values())
    assert counted == {key: n for key, n in (("constituents", report.constituents), ("words", report.words),
                                             ("runs", report.runs), ("crossing", len(report.crossing))) if n}
    table = format_table([system], examples)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in table.splitlines()
            if line.startswith("| a ") or line.startswith("| crossing")}
    assert [int(cells[0].replace(",", "")) for cells in rows.values()] == [counted[key] for key, _ in PLACES]
    recall = {key: float(rows[text][1].strip(" |")) for key, text in PLACES if counted[key]}
    assert recall["constituents"] > 80  # the sample's phrases are learned


def test_parse_only_mode_needs_no_entities():
    nlp = spacy.blank("en")
    nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL, "ner": False})
    examples = _examples(nlp, limit=20)
    for eg in examples:
        del eg.reference.spans["sc"]
    _train(nlp, examples, epochs=1)
    assert not any("|" in label for label in nlp.get_pipe("joint_parser").labels)
    doc = nlp("STAT3 binds the c-fos promoter .")
    assert "sc" not in doc.spans and doc[:]._.labels is not None


def test_missing_gold_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL})
    examples = _examples(nlp, limit=4)
    del examples[2].reference.spans["sc"]
    with pytest.raises(ValueError, match=r"example 2 .*no doc.spans\['sc'\].*or set ner = false"):
        nlp.initialize(lambda: examples)
    bare = Doc(nlp.vocab, words="STAT3 binds DNA".split())
    no_tree = [Example(Doc(nlp.vocab, words=[t.text for t in bare]), bare)]
    bare.spans["sc"] = SpanGroup(bare, name="sc", spans=[])
    with pytest.raises(ValueError, match="have no gold tree; the reference holds no tree at all.*SentenceDocs"):
        nlp.initialize(lambda: no_tree)


def test_a_gold_tree_cut_by_the_rule_for_long_docs_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL, "ner": False, "max_unsegmented_length": 3})
    ref = Doc(nlp.vocab, words="Cells grew . and died".split())  # one tree, a full stop inside
    set_parse(ref, "(S (S (NNS Cells) (VBD grew)) (. .) (CC and) (S (VBD died)))")
    eg = Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)
    with pytest.raises(ValueError, match="crosses the sentence boundary at token 3.*max_unsegmented_length"):
        nlp.initialize(lambda: [eg])


def _crossing_example(nlp, entities):
    ref = Doc(nlp.vocab, words="The IL-2 gene is expressed".split())
    set_parse(ref, "(S (NP (DT The) (NN IL-2) (NN gene)) (VP (VBZ is) (VBN expressed)))")
    ref.spans["sc"] = SpanGroup(ref, name="sc", spans=[Span(ref, s, e, label=t) for s, e, t in entities])
    return Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)


def test_entities_that_cross_a_bracket_are_counted_and_warned_about():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL})
    eg = _crossing_example(nlp, [(2, 4, "odd"), (1, 3, "DNA")])
    with pytest.warns(UserWarning, match="cross a bracket"):
        nlp.initialize(lambda: [eg])
    nlp.update([eg], sgd=None)
    assert parser.join_report.crossing == [(2, 4, "odd")] and parser.join_report.runs == 1


# ------------------------------------------------------------------ converters
def test_ptb_converter_reads_trees_over_several_lines(tmp_path):
    (tmp_path / "x.trees").write_text(
        "(TOP (S (NP (DT The) (NN cat))\n   (VP (VBD sat)) (. .)))\n\n(TOP (NP (NN -LRB-OH-RRB-)))\n")
    report = convert_ptb(tmp_path / "x.trees", tmp_path / "x.spacy")
    assert (report.trees, report.tokens, report.constituents) == (2, 5, 4)
    docs = list(DocBin().from_disk(tmp_path / "x.spacy").get_docs(spacy.blank("en").vocab))
    assert [t.text for t in docs[1]] == ["(OH)"] and [t.tag_ for t in docs[0]] == ["DT", "NN", "VBD", "."]
    assert docs[0][:]._.parse_string == "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"
    (tmp_path / "empty.trees").write_text("\n")
    with pytest.raises(TreebankError, match="no trees in the file"):
        convert_ptb(tmp_path / "empty.trees", tmp_path / "empty.spacy")
    (tmp_path / "bad.trees").write_text("(TOP (S (NP (DT The) (NN cat))\n")
    with pytest.raises(TreebankError, match="bad.trees:1: unbalanced"):
        convert_ptb(tmp_path / "bad.trees", tmp_path / "bad.spacy")


def test_joint_jsonl_converter_keeps_every_entity_and_counts_what_the_tree_cannot_hold(tmp_path):
    record = {"tokens": ["The", "IL-2", "gene", "is", "expressed"], "tags": ["DT", "NN", "NN", "VBZ", "VBN"],
              "tree": "(TOP (S (NP (DT The) (NN IL-2) (NN gene)) (VP (VBZ is) (VBN expressed))))",
              "spans": [{"start": 1, "end": 3, "label": "DNA"}, {"start": 1, "end": 2, "label": "protein"},
                        {"start": 2, "end": 4, "label": "odd"}, {"start": 0, "end": 3, "label": "DNA"}],
              "n_unaligned_spans": 2}
    (tmp_path / "x.jsonl").write_text(json.dumps(record) + "\n")
    report = convert_joint_jsonl(tmp_path / "x.jsonl", tmp_path / "x.spacy")
    j = report.joined
    assert (report.entities, j.constituents, j.words, j.runs, len(j.crossing)) == (4, 1, 1, 1, 1)
    assert report.unaligned_upstream == 2 and "1 cross a bracket" in " ".join(report.lines())
    doc = list(DocBin().from_disk(tmp_path / "x.spacy").get_docs(spacy.blank("en").vocab))[0]
    assert len(doc.spans["sc"]) == 4  # all kept, the crossing one too
    assert constituents(tree_of(doc, 0, 5)) == constituents(parse_brackets(record["tree"]).root)
    record["tags"][1] = "VB"
    (tmp_path / "tags.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(TreebankError, match="tag 1 is 'VB' in 'tags' and 'NN' in the tree"):
        convert_joint_jsonl(tmp_path / "tags.jsonl", tmp_path / "tags.spacy")
    record["tags"][1] = "NN"
    record["tokens"][1] = "IL-4"
    (tmp_path / "bad.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(TreebankError, match="bad.jsonl:1: word 1 of the tree is 'IL-2', the token is 'IL-4'"):
        convert_joint_jsonl(tmp_path / "bad.jsonl", tmp_path / "bad.spacy")


def test_another_components_bytes_are_refused_by_name(trained):
    """nested_ner and joint_parser share the span scorer, so weights alone
    would load: the saved kind of component is checked."""
    nlp = trained
    joint_bytes = nlp.get_pipe("joint_parser").to_bytes()
    ner = spacy.blank("en").add_pipe("nested_ner", config={"model": SMALL_MODEL})
    with pytest.raises(ValueError, match="is a joint_parser, not a nested_ner"):
        ner.from_bytes(joint_bytes)
    again = spacy.blank("en").add_pipe("joint_parser", config={"model": SMALL_MODEL})
    again.from_bytes(joint_bytes)
    assert again.labels == nlp.get_pipe("joint_parser").labels
    with pytest.raises(ValueError, match="could not read the saved component"):
        spacy.blank("en").add_pipe("joint_parser", config={"model": SMALL_MODEL}).from_bytes(b"")


def test_gold_entities_on_whitespace_edges_are_counted_not_trained_on():
    from spacy.tokens import Doc, Span
    from spacy.training import Example
    from spacy_struct.joint_parser import set_parse

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL})
    ref = Doc(nlp.vocab, words=["IL-2", " ", "binds", "DNA"], spaces=[False, False, True, False])
    set_parse(ref, "(S (NP (NN IL-2) (SP -SP-)) (VP (VBZ binds) (NP (NN DNA))))")
    ref.spans["sc"] = [Span(ref, 0, 2, label="protein"), Span(ref, 3, 4, label="DNA")]
    eg = Example(Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref]), ref)
    with pytest.warns(UserWarning, match="start or end on a whitespace token"):
        parser.initialize(lambda: [eg])
    counted = parser.unrepresentable_gold
    assert counted >= 1
    parser.gold_charts(eg, 0)
    assert parser.unrepresentable_gold == counted + 1
    assert not any("protein" in label for label in parser.labels)
    assert any("DNA" in label for label in parser.labels)


def test_the_entity_loss_is_added_to_the_tree_loss_and_its_gradient_is_the_losss():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL, "entity_loss_weight": 0.5})
    examples = _examples(nlp, limit=4)
    nlp.initialize(lambda: examples)
    docs, ranges, golds = parser.collect_gold(examples)
    assert all(entities is not None and len(entities) for _, entities in golds[:2])
    batch = parser.make_batch(docs, ranges)
    scores = [s.astype(np.float64) for s in parser.model.predict(batch)]
    loss, grads = parser.get_loss_from_scores(batch, scores, golds)
    alone, _ = parser.entity_columns().loss(scores, [entities for _, entities in golds])
    parser.cfg["entity_loss_weight"] = 0.0
    tree_loss, _ = parser.get_loss_from_scores(batch, scores, [(tree, None) for tree, _ in golds])
    parser.cfg["entity_loss_weight"] = 0.5
    assert alone > 0 and loss == pytest.approx(tree_loss + 0.5 * alone)
    # the gradient (per word of the batch) is the loss's, by central differences
    rng = np.random.default_rng(0)
    n_words = sum(batch.lengths())
    for _ in range(3):
        direction = [rng.normal(size=s.shape) for s in scores]
        eps = 1e-4
        up, _ = parser.get_loss_from_scores(batch, [s + eps * d for s, d in zip(scores, direction)], golds)
        down, _ = parser.get_loss_from_scores(batch, [s - eps * d for s, d in zip(scores, direction)], golds)
        analytic = n_words * sum(float((g * d).sum()) for g, d in zip(grads, direction))
        assert (up - down) / (2 * eps) == pytest.approx(analytic, rel=1e-3)
    nlp.update(examples, sgd=nlp.create_optimizer())  # trains with it


def test_the_entity_loss_learns_entities_the_tree_cannot_hold_and_counts_types_it_has_no_column_for():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL})
    # "gene is" crosses the NP / VP bracket: out of the tree, in the entity loss
    eg = _crossing_example(nlp, [(0, 1, "DNA"), (1, 2, "protein"), (2, 4, "DNA")])
    with pytest.warns(UserWarning, match="cross a bracket"):
        nlp.initialize(lambda: [eg])
    _, [(tree, entities)] = parser.gold(eg, 0)
    types = parser.entity_columns().types
    assert sorted((s, e, types[t]) for s, e, t in entities.tolist()) == [(0, 0, "DNA"), (1, 1, "protein"), (2, 3, "DNA")]
    assert parser.join_report.crossing == [(2, 4, "DNA")]
    # a type seen only across a bracket has no column: counted, not a crash
    odd = _crossing_example(nlp, [(0, 1, "DNA"), (2, 4, "odd")])
    before = parser.unrepresentable_gold
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, [(_, entities)] = parser.gold(odd, 1)
    assert entities.tolist() == [[0, 0, types.index("DNA")]] and parser.unrepresentable_gold == before + 1
    nlp.update([eg, odd], sgd=nlp.create_optimizer())


def test_the_entity_loss_needs_factored_labels_and_is_off_where_there_is_nothing_to_train():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="entity_loss_weight must be a finite number >= 0"):
        nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL, "entity_loss_weight": -1})
    # a whole-label model loads (saved ones must), and is refused before training
    nlp.add_pipe("joint_parser", config={"model": SMALL_MODEL, "factor_labels": False})
    examples = _examples(nlp, limit=4)
    with pytest.raises(ValueError, match=r"entity_loss_weight = 1.0 trains the entity columns .*factor_labels = false does not have: set entity_loss_weight = 0"):
        nlp.initialize(lambda: examples)
    whole = spacy.blank("en")
    whole.add_pipe("joint_parser", config={"model": SMALL_MODEL, "factor_labels": False, "entity_loss_weight": 0})
    whole.initialize(lambda: _examples(whole, limit=4))
    for ner in (False, True):  # parse-only, and a treebank with no entities: nothing to weigh
        bare = spacy.blank("en")
        pipe = bare.add_pipe("joint_parser", config={"model": SMALL_MODEL, "ner": ner})
        examples = _examples(bare, limit=4)
        for eg in examples:
            eg.reference.spans["sc"] = SpanGroup(eg.reference, name="sc", spans=[])
        bare.initialize(lambda: examples)
        assert pipe.entity_columns() is None and pipe.cfg["entity_loss_weight"] == 1.0
        bare.update(examples, sgd=bare.create_optimizer())
