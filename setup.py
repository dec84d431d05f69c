"""Build the Cython structure decoders.

Metadata lives in setup.cfg; this file only declares the extensions, so that
`pip install .` compiles them from the .pyx sources. The sources live under
src/, so running from a checkout can never import the uncompiled tree instead
of the installed package.
"""
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
SOURCES = sorted((HERE / "src").glob("spacy_struct/**/*.pyx"))

extensions = [
    Extension(
        ".".join(path.relative_to(HERE / "src").with_suffix("").parts),
        [path.relative_to(HERE).as_posix()],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # no fused multiply-adds: a kernel that says it does numpy's
        # operations in numpy's order then rounds as numpy does everywhere
        extra_compile_args=["-O3", "-ffp-contract=off"],
    )
    for path in SOURCES
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
