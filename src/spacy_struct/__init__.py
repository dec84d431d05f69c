"""spacy_struct: spaCy v3 pipeline components for structured prediction.

The structures (spanning trees, span trees, gapped segments) live in
`spacy_struct.structs` and have no spaCy dependency; the components that use
them register themselves with spaCy through entry points.
"""
__version__ = "0.1.0"
