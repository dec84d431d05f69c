"""The package's layout rules, read from the source: no component folder
imports another, `convert/` and `annotations/` import no component folder,
and docs/architecture.md names every subpackage."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "spacy_struct"
COMPONENTS = ("mst_parser", "nested_ner", "overlap_segmenter", "joint_parser", "morph_segmenter")


def _imported_folders(path: Path):
    """The top-level spacy_struct subpackages a module imports."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    package_parts = path.relative_to(PACKAGE).parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = list(package_parts[:len(package_parts) - node.level + 1])
                parts = base + (node.module.split(".") if node.module else [])
                if not node.module:
                    parts += [alias.name for alias in node.names]
            elif node.module and node.module.startswith("spacy_struct."):
                parts = node.module.split(".")[1:]
            else:
                continue
            if parts:
                yield parts[0], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spacy_struct."):
                    yield alias.name.split(".")[1], node.lineno


def _modules(folder: str):
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", COMPONENTS)
def test_no_component_imports_another(folder):
    bad = [f"{path.relative_to(PACKAGE)}:{line} imports {target}/"
           for path in _modules(folder) for target, line in _imported_folders(path)
           if target in COMPONENTS and target != folder]
    assert not bad, bad


@pytest.mark.parametrize("folder", ["convert", "annotate", "annotations", "pipeline", "models", "structs"])
def test_lower_layers_and_converters_import_no_component(folder):
    bad = [f"{path.relative_to(PACKAGE)}:{line} imports {target}/"
           for path in _modules(folder) for target, line in _imported_folders(path) if target in COMPONENTS]
    assert not bad, bad


def test_annotations_stand_below_the_component_skeleton():
    """annotations/ is read by converters and components alike: it imports
    neither the pipeline layer nor thinc's models."""
    bad = [f"{path.relative_to(PACKAGE)}:{line} imports {target}/"
           for path in _modules("annotations") for target, line in _imported_folders(path)
           if target in ("pipeline", "models", "losses")]
    assert not bad, bad


def test_the_architecture_page_names_every_subpackage():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf8")
    subpackages = sorted(p.parent.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("__init__.py")
                         if p.parent != PACKAGE)
    missing = [name for name in subpackages if f"{name.split('/')[-1]}/" not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"
