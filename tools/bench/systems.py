"""The systems a benchmark compares: trained pipelines named on the command
line, and the training runs that made them (with their wall-clock time)."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional


def load_system(system: "System", config: Optional[Dict[str, object]] = None):
    """Load the system's pipeline, with its settings overrides and, if the
    spec names one, another registered tokenizer (for raw text)."""
    import spacy
    from spacy.util import registry

    from contextlib import nullcontext

    from thinc.api import use_ops

    # thinc's NumpyOps multiplies through blis by default; a model keeps the
    # ops current when it is built, so numpy's are set for the load alone
    with use_ops("numpy", use_blis=False) if system.matmul == "numpy" else nullcontext():
        system.nlp = spacy.load(system.path, config=config or {})
    # spaCy's own trainable pipes (spancat's threshold, ...) keep the saved
    # cfg over load-time settings: give them the settings directly
    for name, settings in (config or {}).get("components", {}).items():
        cfg = getattr(system.nlp.get_pipe(name), "cfg", None)
        if isinstance(cfg, dict):
            cfg.update({k: v for k, v in settings.items() if k in cfg})
    if system.tokenizer:
        system.nlp.tokenizer = registry.tokenizers.get(system.tokenizer)()(system.nlp)
    return system.nlp


@dataclass
class System:
    label: str
    path: Path
    decoder: Optional[str] = None
    gold_tags: bool = False
    tokenizer: Optional[str] = None
    #: "numpy": the pipeline's thinc layers multiply with numpy's BLAS instead of blis
    matmul: Optional[str] = None
    #: add the coordination rule's discontinuous mentions to its spans (segments bench)
    coordination_rule: bool = False
    config: Dict[str, object] = field(default_factory=dict)
    nlp: object = None
    scores: Dict[str, object] = field(default_factory=dict)
    best_time: float = float("inf")
    nonproj_sents: float = 0.0
    #: predicted entities per dev doc, (start, end, label) sets (joint bench)
    entities: Optional[list] = None
    #: predicted (heads, lowercased labels) per dev doc (parse bench, gold words)
    arcs: Optional[list] = None


def parse_spec(spec: str) -> System:
    """LABEL=PATH[,decoder=cle|eisner][,gold_tags][,tokenizer=REGISTERED_NAME]
    [,coordination_rule][,matmul=blis|numpy][,COMPONENT.SETTING=VALUE]:
    matmul=numpy loads the pipeline with thinc's NumpyOps multiplying
    through numpy's BLAS rather than blis (thinc's default); coordination_rule adds
    the rule's discontinuous mentions to a span tagger's output (segments
    bench, tools/bench/coordination.py); the last sets a component's setting at load
    time (`spacy.load(path, config=...)`), e.g. overlap_segmenter.threshold=-1.
    LABEL=supar:MODEL_FILE names a SuPar model (the joint bench runs it)."""
    label, _, rest = spec.partition("=")
    if not rest:
        raise ValueError(f"expected LABEL=PATH[,decoder=...][,gold_tags], got {spec!r}")
    path, *options = rest.split(",")
    if path.startswith("supar:"):
        if not Path(path[len("supar:"):]).is_file():
            raise ValueError(f"no SuPar model file {path[len('supar:'):]!r} in {spec!r}")
        return System(label, Path(path))
    if not Path(path).is_dir():
        hint = " (a label cannot contain '=')" if "=" in rest else ""
        raise ValueError(f"no pipeline directory {path!r} in {spec!r}{hint}")
    system = System(label, Path(path))
    for option in options:
        key, _, value = option.partition("=")
        if key == "decoder":
            system.decoder = value
        elif key == "gold_tags":
            system.gold_tags = True
        elif key == "tokenizer":
            system.tokenizer = value
        elif key == "matmul":
            if value not in ("blis", "numpy"):
                raise ValueError(f"matmul must be blis or numpy, not {value!r}, in {spec!r}")
            system.matmul = value if value == "numpy" else None
        elif key == "coordination_rule":
            system.coordination_rule = True
        elif "." in key and value:
            import srsly

            component, setting = key.split(".", 1)
            try:
                parsed = srsly.json_loads(value)
            except ValueError:
                parsed = value
            system.config.setdefault("components", {}).setdefault(component, {})[setting] = parsed
        else:
            raise ValueError(f"unknown option {option!r} in {spec!r}")
    return system


def timed_train(config: Path, output: Path, overrides: Dict[str, object]) -> Dict[str, float]:
    """`spacy train` with its wall-clock time saved next to the pipelines."""
    from spacy.cli.train import train

    start = time.perf_counter()
    train(config, output, overrides=overrides)
    seconds = time.perf_counter() - start
    meta = json.loads((output / "model-last" / "meta.json").read_text())
    from spacy.util import load_config

    cfg = load_config(config, overrides=overrides)
    info = {"seconds": seconds, "max_epochs": cfg["training"]["max_epochs"],
            "max_steps": cfg["training"]["max_steps"], "pipeline": meta.get("pipeline", [])}
    (output / "training_time.json").write_text(json.dumps(info, indent=2))
    return info


def training_summary(system: System) -> str:
    """Budget and wall-clock of the run that trained the system."""
    info_path = system.path.parent / "training_time.json"
    if system.decoder and system.decoder != "cle" and "decoder" not in str(system.path):
        return "(decoding only)"
    if not info_path.exists():
        return "-"
    info = json.loads(info_path.read_text())
    epochs = info.get("max_epochs") or 0
    steps = info.get("max_steps") or 0
    total = info["seconds"] / 60
    if steps and epochs:  # spaCy stops at whichever comes first
        return f"{steps:,} steps or {epochs} epochs, the first reached, {total:.1f} min"
    if epochs:
        return f"{epochs} epochs, {total:.1f} min ({info['seconds'] / epochs:.0f} s/epoch)"
    return f"{info.get('max_steps')} steps, {total:.1f} min"


def gold_token_docs(system: System, examples):
    """Fresh docs of the examples' gold words and spaces, in the system's vocab."""
    from spacy.tokens import Doc

    vocab = system.nlp.vocab
    return [Doc(vocab, words=[t.text for t in eg.predicted],
                spaces=[bool(t.whitespace_) for t in eg.predicted]) for eg in examples]


def assemble(output: Path, pipelines) -> str:
    """One pipeline of the components of several trained ones (each with
    its own tok2vec, so they can be taken apart), saved as
    OUTPUT/model-best, with the summed training time of the runs."""
    import spacy

    first = spacy.load(pipelines[0])
    for path in pipelines[1:]:
        other = spacy.load(path)
        for name in other.pipe_names:
            first.add_pipe(name, source=other)
    output.mkdir(parents=True, exist_ok=True)
    first.to_disk(output / "model-best")
    infos = [json.loads((Path(p).parent / "training_time.json").read_text()) for p in pipelines
             if (Path(p).parent / "training_time.json").exists()]
    if infos:
        info = {"seconds": sum(i["seconds"] for i in infos), "max_epochs": infos[0]["max_epochs"],
                "max_steps": infos[0]["max_steps"], "pipeline": first.pipe_names}
        (output / "training_time.json").write_text(json.dumps(info, indent=2))
    return ", ".join(first.pipe_names)
