"""A structured component's label set, sized into its scorer's output layer."""
from typing import Any, Dict, List, Sequence, Tuple

from thinc.api import Model


class LabelSet:
    """The label set in `cfg["labels"]`, sized into the scorer's "output" layer."""

    cfg: Dict[str, Any]
    model: Model
    name: str

    @property
    def labels(self) -> Tuple[str, ...]:
        """The labels the component predicts, in the order of the output layer."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """The labels, for `nlp.initialize(labels=...)` (`spacy init labels`)."""
        return list(self.labels)

    @property
    def is_sized(self) -> bool:
        """Whether the output layer's size (nO, the number of labels) is fixed."""
        output = self.model.get_ref("output")
        return output.has_dim("nO") is True

    def add_label(self, label: str) -> int:
        """Add a label before initialization.

        label: a non-empty string.
        RETURNS: 1 if the label was added, 0 if it was there already.
        """
        if not isinstance(label, str) or not label:
            raise ValueError(f"{self.name}: a label must be a non-empty string, got {label!r}")
        if label in self.cfg["labels"] or label in self.implicit_labels:
            return 0
        if self.is_sized:
            raise ValueError(
                f"{self.name}: cannot add label {label!r} to a component that is already "
                f"initialized; initialize it again with data that has the label"
            )
        self.cfg["labels"].append(label)
        return 1

    #: labels the component writes without predicting them (mst_parser's ROOT)
    implicit_labels: Tuple[str, ...] = ()

    def set_labels(self, labels: Sequence[str]) -> None:
        """Replace the label set and size the output layer to it.

        Raises a ValueError for a label that is not a non-empty string, and
        for a component whose output layer already has another size.
        """
        found = []
        for label in labels:
            if not isinstance(label, str) or not label:
                raise ValueError(f"{self.name}: a label must be a non-empty string, got {label!r}")
            if label not in self.implicit_labels and label not in found:
                found.append(label)
        output = self.model.get_ref("output")
        width = self.output_width(found)
        if self.is_sized and output.get_dim("nO") != width:
            raise ValueError(
                f"{self.name}: the component is already initialized with "
                f"{output.get_dim('nO')} output columns and cannot be resized to {width} "
                f"({len(found)} labels); add a new {self.name} component for the new label set"
            )
        self.cfg["labels"] = found
        output.set_dim("nO", width)

    def output_width(self, labels: Sequence[str]) -> int:
        """The output layer's number of columns for `labels`: one per label,
        unless the component scores its labels from shared parts."""
        return len(labels)
