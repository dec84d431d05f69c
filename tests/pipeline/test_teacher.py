"""Teacher scores (distillation): `python -m spacy_struct teach` averages
trained pipelines' scores per sentence, `SentenceDocs.v1` attaches them,
and a student trained toward them learns the teacher's output, not only
the gold."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam, fix_random_seed

from spacy_struct.__main__ import main
from spacy_struct.pipeline import gold_token_doc
from spacy_struct.pipeline.teacher import TEACHER_KEY, TeacherScores, write_teacher_scores

from helpers.toy_segments import SENTENCES, SMALL_MODEL, segment_references

SWAPPED = {"PR": "SO", "SO": "PR"}


def _references(vocab, swap=False):
    return segment_references(vocab, SWAPPED if swap else None)


def _train(examples_of, updates=100, seed=0, **settings):
    fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": SMALL_MODEL, **settings})
    nlp.initialize(lambda: examples_of(nlp))
    optimizer = Adam(0.03)
    for _ in range(updates):
        nlp.update(examples_of(nlp), sgd=optimizer)
    return nlp


def _plain_examples(swap):
    return lambda nlp: [Example(gold_token_doc(ref, nlp.vocab), ref) for ref in _references(nlp.vocab, swap)]


def _found(nlp):
    return {(seg.label_, seg.offsets) for text, _ in SENTENCES for seg in nlp(text)._.segments}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A corpus of the true gold, and teachers trained on the gold with
    the two labels swapped (so what a student learns from them shows)."""
    root = tmp_path_factory.mktemp("teacher")
    corpus = root / "train.spacy"
    DocBin(docs=_references(spacy.blank("en").vocab), store_user_data=True).to_disk(corpus)
    teachers = []
    for seed in (0, 1):
        nlp = _train(_plain_examples(swap=True), seed=seed)
        nlp.to_disk(root / f"teacher{seed}")
        teachers.append(root / f"teacher{seed}")
    scores = root / "teacher.npz"
    write_teacher_scores(scores, corpus, teachers, progress=None)
    return corpus, teachers, scores


def test_the_file_holds_the_average_of_the_teachers_scores(files):
    corpus, teachers, path = files
    scores = TeacherScores(path)
    assert len(scores) == len(SENTENCES) and scores.component == "overlap_segmenter"
    expected = []
    for teacher in teachers:
        nlp = spacy.load(teacher)
        docs = [gold_token_doc(ref, nlp.vocab) for ref in _references(nlp.vocab)]
        docs = list(nlp.get_pipe("tok2vec").pipe(docs)) if "tok2vec" in nlp.pipe_names else docs
        _, _, each = nlp.get_pipe("overlap_segmenter").score_docs(docs)
        assert list(nlp.get_pipe("overlap_segmenter").labels) == list(scores.labels)
        expected.append(each)
    for i, ref in enumerate(_references(spacy.blank("en").vocab)):
        assert scores.attach(ref)
        labels, by_range = ref.user_data[TEACHER_KEY]["overlap_segmenter"]
        assert list(by_range) == [(0, len(ref))]
        mean = (expected[0][i] + expected[1][i]) / 2
        np.testing.assert_allclose(by_range[(0, len(ref))], mean, rtol=1e-5, atol=1e-5)


def test_a_student_learns_what_the_teacher_outputs(files):
    """Weight 1: the student reproduces the teachers' (swapped) segments
    from the true-gold corpus; weight 0: the gold's."""
    corpus, teachers, path = files
    reader = registry.readers.get("spacy_struct.SentenceDocs.v1")(corpus, teacher=str(path))
    teacher_out = _found(spacy.load(teachers[0]))
    gold = {(label, tuple(frags)) for _, segs in SENTENCES for label, frags in segs}
    assert teacher_out != gold
    taught = _train(lambda nlp: list(reader(nlp)), teacher_weight=1.0)
    assert _found(taught) == teacher_out
    plain = _train(lambda nlp: list(reader(nlp)), teacher_weight=0.0)
    assert _found(plain) == gold


def test_docs_the_file_lacks_are_counted_and_train_on_gold(files, tmp_path):
    _, _, path = files
    other = tmp_path / "other.spacy"
    vocab = spacy.blank("en").vocab
    docs = _references(vocab) + [Doc(vocab, words=["an", "unseen", "sentence"])]
    docs[-1]._.segments = []
    DocBin(docs=docs, store_user_data=True).to_disk(other)
    reader = registry.readers.get("spacy_struct.SentenceDocs.v1")(other, teacher=str(path))
    with pytest.warns(UserWarning, match="1 of 5 docs have none"):
        examples = list(reader(spacy.blank("en")))
    assert TEACHER_KEY not in examples[-1].reference.user_data
    assert all(TEACHER_KEY in eg.reference.user_data for eg in examples[:-1])


def test_bad_teacher_use_gets_clear_errors(files, tmp_path):
    corpus, teachers, path = files
    make_reader = registry.readers.get("spacy_struct.SentenceDocs.v1")
    with pytest.raises(ValueError, match="gold_preproc"):
        make_reader(corpus, gold_preproc=False, teacher=str(path))
    not_a_file = tmp_path / "x.npz"
    not_a_file.write_bytes(b"nothing")
    with pytest.raises(ValueError, match="teach"):
        make_reader(corpus, teacher=str(not_a_file))
    reader = make_reader(corpus, teacher=str(path))
    with pytest.raises(ValueError, match="multilabel_margin"):
        _train(lambda nlp: list(reader(nlp)), updates=1, loss="multilabel_margin")

    def other_labels(nlp):
        examples = list(reader(nlp))
        examples[0].reference._.segments = [("XX", [(0, 1)])]
        return examples

    with pytest.raises(ValueError, match="labels"):
        _train(other_labels, updates=1)
    with pytest.raises(ValueError, match="teacher_weight"):
        _train(lambda nlp: list(reader(nlp)), updates=1, teacher_weight=1.5)


def test_the_teach_command(files, tmp_path, capsys):
    corpus, teachers, _ = files
    out = tmp_path / "scores.npz"
    assert main(["teach", str(out), str(corpus), str(teachers[0])]) == 0
    assert len(TeacherScores(out)) == len(SENTENCES)
    assert main(["teach", str(out), str(corpus), str(teachers[0]), "--component", "nope"]) == 1
    assert "no component 'nope'" in capsys.readouterr().err


def test_unlabelled_docs_learn_from_the_teacher_alone(files, tmp_path):
    """Docs with teacher scores and no segments (unlabelled text) train on
    the teacher's scores alone; without a teacher_weight they are refused."""
    corpus, teachers, _ = files
    vocab = spacy.blank("en").vocab
    unlabelled = tmp_path / "unlabelled.spacy"
    DocBin(docs=[Doc(vocab, words=text.split()) for text, _ in SENTENCES], store_user_data=True).to_disk(unlabelled)
    scores = tmp_path / "unlabelled.npz"
    write_teacher_scores(scores, unlabelled, teachers, progress=None)
    reader = registry.readers.get("spacy_struct.SentenceDocs.v1")(unlabelled, teacher=str(scores))
    labelled = _plain_examples(swap=False)

    def mixed(nlp):  # the labels come from one labelled doc; the rest is unlabelled
        return labelled(nlp)[:1] + list(reader(nlp))[1:]

    taught = _train(mixed, teacher_weight=0.5)
    teacher = spacy.load(teachers[0])

    def segments(nlp, texts):
        return {(text, s.label_, s.offsets) for text in texts for s in nlp(text)._.segments}

    texts = [text for text, _ in SENTENCES[1:]]
    assert segments(teacher, texts)  # the teachers output segments there (labels swapped)
    assert segments(taught, texts) == segments(teacher, texts)
    with pytest.raises(ValueError, match="teacher scores"):
        _train(mixed, updates=1, teacher_weight=0.0)


def test_a_folder_of_teacher_files_is_read_as_one(files, tmp_path):
    corpus, teachers, path = files
    folder = tmp_path / "teachers"
    folder.mkdir()
    write_teacher_scores(folder / "a.npz", corpus, teachers[:1], progress=None)
    vocab = spacy.blank("en").vocab
    other = tmp_path / "other.spacy"
    DocBin(docs=[Doc(vocab, words=["a", "new", "one"])], store_user_data=True).to_disk(other)
    write_teacher_scores(folder / "b.npz", other, teachers[:1], progress=None)
    scores = TeacherScores(folder)
    assert len(scores) == len(SENTENCES) + 1
    assert all(scores.attach(doc) for doc in _references(vocab) + [Doc(vocab, words=["a", "new", "one"])])
    with pytest.raises(ValueError, match="without .npz"):
        TeacherScores(tmp_path / "empty" if (tmp_path / "empty").mkdir() is None else None)
    # a doc a later file scores again (a sentence repeated across folds): the first file's scores, counted
    write_teacher_scores(folder / "c.npz", other, teachers[1:], progress=None)
    with pytest.warns(UserWarning, match="1 docs of c.npz .* the earlier file's scores are kept"):
        scores = TeacherScores(folder)
    assert scores.repeated == {"c.npz": 1}
    again = Doc(vocab, words=["a", "new", "one"])
    first = Doc(vocab, words=["a", "new", "one"])
    assert scores.attach(again) and TeacherScores(folder / "b.npz").attach(first)
    kept = again.user_data[TEACHER_KEY]["overlap_segmenter"][1]
    from_b = first.user_data[TEACHER_KEY]["overlap_segmenter"][1]
    assert kept.keys() == from_b.keys()
    assert all(np.array_equal(kept[r], from_b[r]) for r in kept)
    c_doc = Doc(vocab, words=["a", "new", "one"])
    TeacherScores(folder / "c.npz").attach(c_doc)
    from_c = c_doc.user_data[TEACHER_KEY]["overlap_segmenter"][1]
    assert not all(np.array_equal(kept[r], from_c[r]) for r in kept)  # the two teachers differ


def test_targets_follow_the_students_label_order_and_name():
    from spacy_struct.losses import TeacherTarget
    from spacy_struct.pipeline.teacher import teacher_targets

    doc = Doc(spacy.blank("en").vocab, words=["a", "b", "c"])
    scores = np.arange(2 * 5 * 5, dtype=np.float32).reshape(2, 5, 5)
    doc.user_data[TEACHER_KEY] = {"seg": (("PR", "SO"), {(0, 3): scores})}
    ranges, targets, unscored = teacher_targets("seg", ["SO", "PR"], 0.5, doc, [(0, 3)], ["gold"], "crf")
    assert ranges == [(0, 3)] and unscored == 0
    (target,) = targets
    assert isinstance(target, TeacherTarget) and target.gold == "gold" and target.weight == 0.5
    np.testing.assert_array_equal(target.scores, scores[[1, 0]])
    with pytest.raises(ValueError, match="labels"):
        teacher_targets("seg", ["SO", "XX"], 0.5, doc, [(0, 3)], ["gold"], "crf")
    with pytest.raises(ValueError, match="none for 'other'"):
        teacher_targets("other", ["PR", "SO"], 0.5, doc, [(0, 3)], ["gold"], "crf")
    # a range the teachers did not score: its gold alone, counted; without gold it is left out
    assert teacher_targets("seg", ["PR", "SO"], 0.5, doc, [(0, 2), (2, 3)], ["g1", None], "crf")[::2] == \
        ([(0, 2)], 2)


def test_each_sentence_of_a_doc_gets_its_scores(files, tmp_path):
    corpus, teachers, _ = files
    vocab = spacy.blank("en").vocab
    words = "BMP2 and BMP4 genes are expressed . the limb bud grows".split()
    doc = Doc(vocab, words=words, sent_starts=[True] + [False] * 6 + [True] + [False] * 3)
    doc._.segments = [("PR", [(0, 1)]), ("SO", [(8, 10)])]
    two = tmp_path / "two.spacy"
    DocBin(docs=[doc], store_user_data=True).to_disk(two)
    write_teacher_scores(tmp_path / "two.npz", two, teachers[:1], progress=None)
    (eg,) = registry.readers.get("spacy_struct.SentenceDocs.v1")(two, teacher=str(tmp_path / "two.npz"))(
        spacy.blank("en"))
    _, by_range = eg.reference.user_data[TEACHER_KEY]["overlap_segmenter"]
    assert sorted(by_range) == [(0, 7), (7, 11)]
    assert by_range[(0, 7)].shape[1:] == (9, 9) and by_range[(7, 11)].shape[1:] == (6, 6)
