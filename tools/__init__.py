"""Tools that run from a checkout of the project, not part of the installed
package: the benchmarks (`python -m tools.bench`) and the demo
(`python -m tools.demo`). Run them from the project's root folder, where
`configs/` and `corpus/` are; `spacy project run` does."""
