"""What `annotate` writes: a folder of shards and a manifest.

Per shard `shard-NNNNN`: `.spacy` (a DocBin with store_user_data, so trees,
segments and morphs survive), `.jsonl` (per record its id, its carried
fields and `doc_to_json` of its doc, in input order) and `.errors.jsonl`
(per bad record its id and reason). Each file is written to a temporary
name and renamed when complete, and the shard is added to
`manifest.json` (rewritten the same way) only after all three exist: a run
that stops leaves whole shards, and a re-run skips exactly those.
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence

import srsly.msgpack
from spacy.tokens import Doc, DocBin

MANIFEST = "manifest.json"


def shard_name(index: int) -> str:
    return f"shard-{index:05d}"


def pipeline_info(path: str) -> Dict[str, Any]:
    """What identifies the pipeline a run used, read from its folder without
    loading it: name, version and components (meta.json) and a hash of its
    config.cfg (a re-run with another pipeline is refused). A path that is
    no saved pipeline is a ValueError, before any worker tries to load it."""
    folder = Path(path)
    config, meta = folder / "config.cfg", folder / "meta.json"
    if not config.is_file() or not meta.is_file():
        raise ValueError(f"annotate: {path!r} is not the folder of a saved pipeline (no config.cfg and "
                         f"meta.json there); give the path nlp.to_disk or spacy train wrote")
    info = json.loads(meta.read_text(encoding="utf8"))
    return {"name": info.get("name"), "version": info.get("version"), "path": str(path),
            "pipeline": info.get("pipeline"), "config_sha256": hashlib.sha256(config.read_bytes()).hexdigest()}


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Manifest:
    """The run's manifest: the settings a resumed run must share, and the
    shards done (name, records, docs, errors, first and last id)."""

    def __init__(self, folder: Path, settings: Dict[str, Any]) -> None:
        self.folder = folder
        self.path = folder / MANIFEST
        self.settings = settings
        self.shards: List[Dict[str, Any]] = []
        if self.path.exists():
            saved = json.loads(self.path.read_text(encoding="utf8"))
            if saved.get("settings") != settings:
                differ = sorted(k for k in set(saved.get("settings", {})) | set(settings)
                                if saved.get("settings", {}).get(k) != settings.get(k))
                raise ValueError(
                    f"annotate: {self.path} was written by a run with other settings ({', '.join(differ)}); "
                    f"write to a new folder, or delete it to start over"
                )
            self.shards = [s for s in saved.get("shards", []) if self._complete(s["name"])]

    def _complete(self, name: str) -> bool:
        return all((self.folder / f"{name}{ending}").exists() for ending in (".spacy", ".jsonl", ".errors.jsonl"))

    def done(self, name: str) -> bool:
        return any(s["name"] == name for s in self.shards)

    def add(self, entry: Dict[str, Any]) -> None:
        self.shards = [s for s in self.shards if s["name"] != entry["name"]] + [entry]
        self.shards.sort(key=lambda s: s["name"])
        self.save()

    def totals(self) -> Dict[str, int]:
        """Records, annotated docs and errors over the finished shards, and their number."""
        out = {key: sum(s[key] for s in self.shards) for key in ("records", "docs", "errors")}
        return {**out, "shards": len(self.shards)}

    def save(self) -> None:
        data = {"settings": self.settings, "totals": self.totals(), "shards": self.shards}
        _atomic_write(self.path, json.dumps(data, indent=1).encode("utf8"))


@contextmanager
def msgpack_codecs_looked_up_once() -> Iterator[None]:
    """srsly's msgpack encoders and decoders looked up once for the whole
    block, not once per object packed or unpacked.

    srsly builds a new Packer for every `msgpack_dumps` (and reads its
    decoders for every `msgpack_loads`), and each asks its catalogue registry
    for them: a scan of the Python entry points and of every function
    registered with catalogue, about 1.4 ms in a process that has loaded
    spaCy. `DocBin.add` packs the user data, the span groups and each group,
    and `nlp.pipe(n_process=...)` sends every doc between processes the same
    way, so on short documents the lookups cost more than the pipeline
    itself (a shard of 1,000 GENIA sentences through nested_ner: 7.6 s, of
    which 4.3 s lookups; 2.7 s within this block). Within the block each
    registry returns what it returned on entry, in the same order, so the
    bytes are the same; nothing registers a codec while a shard is
    annotated. Processes forked inside the block (nlp.pipe's, where the
    start method is fork) inherit it; spawned ones look up as before.
    Re-entering is a no-op. Not for threads: the block is process-wide, and
    annotate runs one shard at a time per process."""
    patched = []
    try:
        for registry in (srsly.msgpack.msgpack_encoders, srsly.msgpack.msgpack_decoders):
            if "get_all" in vars(registry):  # already inside the block
                continue
            found = registry.get_all()
            registry.get_all = lambda found=found: dict(found)  # an instance attribute: this registry only
            patched.append(registry)
        yield
    finally:
        for registry in patched:
            del registry.get_all


def write_shard(folder: Path, name: str, rows: Sequence[Dict[str, Any]], docs: Sequence[Doc],
                errors: Sequence[Dict[str, str]], records: int) -> Dict[str, Any]:
    """Write one shard's three files atomically; RETURNS its manifest entry.

    rows: per annotated record {"id", fields..., "annotations"}; docs: their
    docs in the same order; errors: {"id", "reason"} per bad record.
    """
    docbin = DocBin(store_user_data=True)
    with msgpack_codecs_looked_up_once():
        for doc in docs:
            docbin.add(doc)
        data = docbin.to_bytes()
    _atomic_write(folder / f"{name}.spacy", data)
    _atomic_write(folder / f"{name}.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf8"))
    _atomic_write(folder / f"{name}.errors.jsonl",
                  "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in errors).encode("utf8"))
    ids = [r["id"] for r in rows]
    return {"name": name, "records": records, "docs": len(docs), "errors": len(errors),
            "first_id": ids[0] if ids else None, "last_id": ids[-1] if ids else None}


def read_rows(folder: Path) -> List[Dict[str, Any]]:
    """Every annotated record of a finished run, in shard order."""
    rows: List[Dict[str, Any]] = []
    for path in sorted(folder.glob("shard-*.jsonl")):
        if path.name.endswith(".errors.jsonl"):
            continue
        rows.extend(json.loads(line) for line in path.read_text(encoding="utf8").splitlines() if line)
    return rows


def read_errors(folder: Path) -> List[Dict[str, str]]:
    """Every bad record of a finished run, in shard order."""
    out: List[Dict[str, str]] = []
    for path in sorted(folder.glob("shard-*.errors.jsonl")):
        out.extend(json.loads(line) for line in path.read_text(encoding="utf8").splitlines() if line)
    return out


