"""How a structured component reports a problem with its gold: errors that
name the example, and counts of gold left out of training."""
import warnings
from typing import Dict, Optional

from spacy.tokens import Doc
from spacy.training import Example

from ..annotations.text import text_preview


class GoldErrors:
    """One message format for a problem with a training example."""

    name: str

    def gold_error(self, index: int, eg: Example, problem: str) -> ValueError:
        """A ValueError "<component>: example <index> ('<text>...'): <problem>"."""
        return ValueError(f"{self.name}: example {index} ({preview(eg)}): {problem}")


class MisalignedGold:
    """Counts gold left out of training: because the predicted tokens cut it
    differently from the reference (once per kind), or because the
    component's settings make it one the decoder cannot predict; each is
    announced in a warning the first time."""

    name: str
    _misaligned: Optional[Dict[str, int]] = None
    _unrepresentable = 0

    def count_unrepresentable(self, message: str) -> None:
        """Count one gold item left out because the decoder cannot predict
        it; `message` (what and why, naming the first example) is warned the
        first time since `initialize`."""
        if not self._unrepresentable:
            warnings.warn(f"{self.name}: {message}; component.unrepresentable_gold counts them")
        self._unrepresentable += 1

    @property
    def unrepresentable_gold(self) -> int:
        """Gold items left out of training since `initialize` because the
        component's settings exclude them (counted per reading)."""
        return self._unrepresentable

    def count_misaligned(self, what: str) -> None:
        """Count one left-out gold item of kind `what` ("arcs", "spans", ...);
        the first of each kind is announced in a warning."""
        if self._misaligned is None:
            self._misaligned = {}
        if what not in self._misaligned:
            warnings.warn(
                f"{self.name}: some gold {what} are left out of training because the "
                f"predicted tokens (the pipeline's tokenizer, gold_preproc = false) "
                f"split the words differently from the reference; "
                f"component.misaligned_gold counts them"
            )
        self._misaligned[what] = self._misaligned.get(what, 0) + 1

    @property
    def misaligned_gold(self) -> Dict[str, int]:
        """How many gold items of each kind were left out for misalignment
        since `initialize`, counted each time an example was read (so an
        arc left out in every epoch counts once per epoch)."""
        return dict(self._misaligned or {})


def missing_spans_message(reference: Doc, key: str, alternative: str = "") -> str:
    """Why a reference has no `doc.spans[key]`, for a gold error: another
    key, or spaCy's reader having dropped every span group.
    alternative: a further way out (e.g. "or ner = false ...")."""
    found = sorted(reference.spans.keys())
    why = (
        f"its span keys are {found}; set spans_key to the key your corpus uses"
        if found else
        "it has no span groups at all. If the corpus has them, spaCy's reader "
        "dropped them: with gold_preproc = true (on docs with sentence "
        "boundaries, a one-word doc always) or max_length > 0 it cuts docs with "
        "Span.as_doc, which keeps no doc.spans; read the corpus with "
        "spacy_struct.SentenceDocs.v1, or store one sentence per doc without "
        "boundaries"
    )
    return (f"the reference doc has no doc.spans[{key!r}]: {why}{alternative}. A doc "
            f"without entities needs an empty group under the key")


def preview(eg: Example) -> str:
    """The start of an example's text, quoted, for error messages."""
    return text_preview(eg.reference.text)
