"""Small pipelines of every factory, trained in seconds on the embedded
samples, for the robustness tests (they check behaviour under use, not
accuracy). `build_all(directory)` saves one pipeline per factory there;
`run_spawn_check` is what a spawned process runs on them."""
from __future__ import annotations

import pickle
import random
import sys
from pathlib import Path
from typing import Callable, Dict, List

SAMPLE = Path(__file__).resolve().parents[2] / "corpus" / "sample"

TINY_TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "width": 32, "depth": 1,
    "embed_size": 500, "window_size": 1, "maxout_pieces": 2, "subword_features": True,
}
TINY_SPAN_SCORER = {"@architectures": "spacy_struct.SpanScorer.v1", "hidden_width": 16, "dropout": 0.0,
                    "context_width": 16, "context_depth": 1, "tok2vec": TINY_TOK2VEC}

#: raw texts every pipeline is run on: several sentences, a newline, a
#: whitespace-only stretch, an emoji, an empty text
TEXTS = [
    "Expression of the IL-2 gene was studied in human lymphocytes. STAT3 binds the c-fos promoter.",
    "A dog barked.\n",
    "The unhappiness of runners is unbelievable .\n\n  Walking slowly helps.",
    "IL-2 and IL-4 genes are expressed 🙂 in T cells .",
    "",
    "bad",
]


def _docbin_examples(nlp, name: str, limit: int = 60):
    from spacy.tokens import Doc, DocBin
    from spacy.training import Example

    docs = list(DocBin().from_disk(SAMPLE / name).get_docs(nlp.vocab))[:limit]
    return [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d)
            for d in docs]


def _train(nlp, examples, epochs: int) -> None:
    random.seed(0)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(epochs):
        for i in range(0, len(examples), 16):
            nlp.update(examples[i:i + 16], sgd=optimizer)


def _mst_parser():
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy_struct.convert.conllu import read_conllu, sentences_to_docs

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("mst_parser", config={"model": {
        "@architectures": "spacy_struct.BiaffineArcScorer.v1", "arc_width": 16, "label_width": 8,
        "dropout": 0.0, "context_width": 0, "tok2vec": TINY_TOK2VEC}})
    sentences = list(read_conllu(SAMPLE / "sample-train.conllu"))[:60]
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d)
                for d in sentences_to_docs(sentences, nlp.vocab, n_sents=1)]
    _train(nlp, examples, 2)
    return nlp


def _nested_examples(nlp):
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy_struct.convert.spans_jsonl import read_spans_jsonl, sentence_to_doc

    examples = []
    for sent in list(read_spans_jsonl(SAMPLE / "sample-nested-train.jsonl"))[:60]:
        ref = sentence_to_doc(sent, nlp.vocab)
        examples.append(Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref))
    return examples


def _nested_ner():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": TINY_SPAN_SCORER})
    _train(nlp, _nested_examples(nlp), 2)
    return nlp


def _overlap_segmenter():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": {"context_width": 16, "hidden_width": 16, "skip_width": 8,
                                                        "dropout": 0.0, "tok2vec": TINY_TOK2VEC}})
    _train(nlp, _docbin_examples(nlp, "segments_train.spacy"), 2)
    return nlp


def _joint_parser():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("joint_parser", config={"model": TINY_SPAN_SCORER})
    _train(nlp, _docbin_examples(nlp, "joint_train.spacy"), 2)
    return nlp


def _morph_segmenter():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("morph_segmenter", config={"sweeps": 2, "verbose": False, "tune_priors": False})
    examples = _docbin_examples(nlp, "morph_train.spacy", limit=200)
    nlp.initialize(lambda: examples)
    return nlp


def _supervised_morph_segmenter():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("supervised_morph_segmenter", config={"model": {
        "@architectures": "spacy_struct.MorphScorer.v1", "char_width": 16, "char_rows": 512, "word_width": 16,
        "char_context_width": 16, "hidden_width": 16, "lexicon_rows": 1024, "dropout": 0.0,
        "tok2vec": TINY_TOK2VEC}})
    _train(nlp, _docbin_examples(nlp, "morph_train.spacy", limit=200), 2)
    return nlp


BUILDERS: Dict[str, Callable] = {
    "mst_parser": _mst_parser,
    "nested_ner": _nested_ner,
    "overlap_segmenter": _overlap_segmenter,
    "joint_parser": _joint_parser,
    "morph_segmenter": _morph_segmenter,
    "supervised_morph_segmenter": _supervised_morph_segmenter,
}


def build_all(directory: Path) -> Dict[str, Path]:
    """Train and save one pipeline per factory under `directory`."""
    import warnings

    paths = {}
    for name, build in BUILDERS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nlp = build()
        paths[name] = directory / name
        nlp.to_disk(paths[name])
    return paths


def annotations(doc) -> dict:
    """Everything a component may have written on a doc, as plain data."""
    from spacy_struct.annotations import doc_to_json

    return doc_to_json(doc)


def extension_view(doc) -> dict:
    """What a user reads through the extensions, where a component wrote:
    `Token._.morphs`, `Doc._.segments`, each sentence's `._.parse_string`."""
    from spacy_struct.annotations import morphs, segments, trees

    view = {}
    if morphs.USER_DATA_KEY in doc.user_data:
        view["morphs"] = [None if t._.morphs is None else tuple(t._.morphs) for t in doc]
    if segments.USER_DATA_KEY in doc.user_data:
        view["segments"] = [(s.label_, tuple(s.offsets)) for s in doc._.segments]
    if trees.USER_DATA_KEY in doc.user_data:
        view["trees"] = [s._.parse_string for s in doc.sents]
    return view


def unpickled_view(data: bytes) -> list:
    """In a new process: the pipeline pickled in `data`, run on TEXTS, read
    through the extensions (no factory has run here to register them)."""
    nlp = pickle.loads(data)
    return [extension_view(doc) for doc in nlp.pipe(TEXTS)]


def run_spawn_check(paths: List[str]) -> None:
    """For each saved pipeline: nlp.pipe(TEXTS, n_process=2) under spawn
    must give the annotations of nlp.pipe(TEXTS), the pipeline must pickle
    after use, and unpickled in a new process it must give them through
    the extensions too. Prints one line per pipeline; exits 1 on a failure."""
    import multiprocessing

    import spacy

    multiprocessing.set_start_method("spawn", force=True)
    failed = False
    for path in paths:
        nlp = spacy.load(path)
        serial = [annotations(doc) for doc in nlp.pipe(TEXTS)]
        try:
            parallel = [annotations(doc) for doc in nlp.pipe(TEXTS, n_process=2, batch_size=2)]
            same = parallel == serial
            again = pickle.loads(pickle.dumps(nlp))
            repickled = [annotations(doc) for doc in again.pipe(TEXTS)] == serial
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                fresh = pool.apply(unpickled_view, (pickle.dumps(nlp),))
            read_alike = fresh == [extension_view(doc) for doc in nlp.pipe(TEXTS)]
            print(f"{Path(path).name}: spawn {'same' if same else 'DIFFERENT'}, "
                  f"pickle {'same' if repickled else 'DIFFERENT'}, "
                  f"unpickled in a new process {'same' if read_alike else 'DIFFERENT'}", flush=True)
            failed |= not (same and repickled and read_alike)
        except Exception as err:  # reported, not raised: every pipeline is checked
            print(f"{Path(path).name}: FAILED {type(err).__name__}: {err}", flush=True)
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    run_spawn_check(sys.argv[1:])
