"""Every shipped config trains from a fresh checkout, and its pipeline runs on raw text.

Each config is trained for a few steps on the embedded sample (the parser
configs on the dependency sample, the span configs on the nested-entity
sample, the joint_parser configs on the joint sample, the morph_segmenter configs
on the morphology sample) in place of its
corpus, with everything else as shipped: the
architectures, the tokenizer, the pipeline's components and their settings.
"""
from pathlib import Path

import pytest
import spacy
from spacy.cli.train import train
from spacy.util import load_config

from conftest import ROOT, SAMPLE

CONFIGS = sorted((ROOT / "configs").glob("*.cfg"))
SPAN_COMPONENTS = {"nested_ner", "spancat"}


def _sample_for(config: Path):
    loaded = load_config(config)
    pipeline = loaded["nlp"]["pipeline"]
    if "joint_parser" in pipeline:
        return SAMPLE / "joint_train.spacy", SAMPLE / "joint_dev.spacy"
    if any(name.endswith("morph_segmenter") for name in pipeline):
        return SAMPLE / "morph_train.spacy", SAMPLE / "morph_dev.spacy"
    if "overlap_segmenter" in pipeline or "craft" in loaded["paths"]["train"]:
        return SAMPLE / "segments_train.spacy", SAMPLE / "segments_dev.spacy"
    if SPAN_COMPONENTS & set(pipeline):
        return SAMPLE / "nested_train.spacy", SAMPLE / "nested_dev.spacy"
    return SAMPLE / "train.spacy", SAMPLE / "dev.spacy"


def test_the_configs_are_all_here():
    names = {c.stem for c in CONFIGS}
    assert {"mst_parser_ewt", "mst_parser_ewt_wide", "mst_parser_gothic", "mst_parser_sample", "nested_ner_genia",
            "nested_ner_sample", "spacy_parser_ewt", "spancat_genia", "overlap_segmenter_craft",
            "overlap_segmenter_sample", "spancat_craft", "joint_parser_genia",
            "joint_parser_sample", "morph_segmenter_sample", "supervised_morph_sigmorphon",
            "senter_detached_ewt"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_every_shipped_config_trains_a_few_steps_and_runs_on_raw_text(config, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)        # configs name their corpora relative to the project
    train_path, dev_path = _sample_for(config)
    overrides = {
        "paths.train": str(train_path), "paths.dev": str(dev_path),
        "corpora.train.limit": 24, "corpora.dev.limit": 6,
        "training.max_steps": 3, "training.eval_frequency": 3, "training.max_epochs": 1,
    }
    if "parser" in load_config(config)["paths"]:
        # a config that adds to a trained parser pipeline (the detached
        # senter) starts from the sample parser's, trained a few steps too
        parser_overrides = {key: value for key, value in overrides.items() if not key.startswith("paths.")}
        train(ROOT / "configs" / "mst_parser_sample.cfg", tmp_path / "parser", overrides=parser_overrides)
        overrides["paths.parser"] = str(tmp_path / "parser" / "model-last")
    train(config, tmp_path / "out", overrides=overrides)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    doc = nlp("The old farmer sold the car. Expression of the IL-2 gene was studied.")
    assert len(doc) > 0
    for name in nlp.pipe_names:
        if name in ("mst_parser", "parser"):
            assert doc.has_annotation("DEP")
        if name in ("nested_ner", "spancat", "overlap_segmenter"):
            assert "sc" in doc.spans
        if name == "overlap_segmenter":
            assert isinstance(doc._.segments, tuple)
        if name == "joint_parser":
            assert "sc" in doc.spans and list(doc._.constituents)
        if name == "morph_segmenter":
            assert all("".join(t._.morphs) == t.text for t in doc)
