"""`spacy_struct.BiomedicalTokenizer.v1`: spaCy's tokenizer, tuned to how
biomedical corpora (GENIA and the treebanks built on it) cut words.

spaCy's English tokenizer splits every hyphen between letters, so the gene
and protein names that biomedical text is made of ("c-fos", "NF-kappa",
"IL-2") come out in pieces that a model trained on the corpus's own tokens
has never seen. This tokenizer is for English text: it keeps the
language's prefixes, suffixes and exceptions, and replaces the infix rules
with spaCy's English ones changed as follows:

- a hyphen inside a word does not split it ("c-fos", "proto-oncogenes"),
  unless what follows is a modifier such as "-induced", "-dependent",
  "-binding", "-like" or "-specific": then the word before it is cut off
  and the hyphen stays with the modifier ("IL-6-induced" -> "IL-6",
  "-induced"), as GENIA cuts such words when the first part is a term;
- a slash between words splits ("enhancer/promoter" -> "enhancer", "/",
  "promoter");
- a full stop after a capital letter or a digit at the end of a word is a
  suffix ("NF-kappa B." -> "B", "."), as it already is after a lowercase
  letter; the language's abbreviations and initialisms ("U.S.") stay whole;
- a plus sign after a digit stays with the word ("CD4+", "Ca2+"), where
  spaCy's English rules cut it off: GENIA's tokens keep it 357 times in
  its training split and cut it 61 times.

Set it in a config's `[nlp.tokenizer]` block:

    [nlp.tokenizer]
    @tokenizers = "spacy_struct.BiomedicalTokenizer.v1"
"""
from __future__ import annotations

from typing import Callable

from spacy.lang.char_classes import ALPHA, ALPHA_LOWER, ALPHA_UPPER, CONCAT_QUOTES, LIST_ELLIPSES, LIST_ICONS
from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.util import compile_infix_regex, compile_suffix_regex, registry

#: what may follow a hyphen and be cut off with it as a token of its own
MODIFIERS = (
    r"[a-z]+(?:ed|ing)|like|specific|rich|dependent|independent|resistant|responsive"
    r"|inducible|positive|negative|deficient|sensitive|bound|free"
)

INFIXES = LIST_ELLIPSES + LIST_ICONS + [
    r"(?<=[0-9])[+\*^](?=[0-9-])",
    r"(?<=[{al}{q}])\.(?=[{au}{q}])".format(al=ALPHA_LOWER, au=ALPHA_UPPER, q=CONCAT_QUOTES),
    r"(?<=[{a}]),(?=[{a}])".format(a=ALPHA),
    r"(?<=[{a}0-9])[:<>=](?=[{a}])".format(a=ALPHA),
    r"(?<=[{a}0-9])/(?=[{a}0-9])".format(a=ALPHA),
    # zero width: the cut falls before the hyphen, which stays with the modifier
    r"(?<=[{a}0-9])(?=-(?:{m})(?![{a}]))".format(a=ALPHA, m=MODIFIERS),
]

#: a full stop after a capital letter or a digit, at the end of a word
#: (not after an initialism's own full stops: "U.S." stays whole)
EXTRA_SUFFIXES = [r"(?<![.][{au}])(?<=[{au}0-9])\.$".format(au=ALPHA_UPPER)]

#: the language's suffix rules left out: a plus sign after a digit ("CD4+")
DROPPED_SUFFIXES = {r"(?<=[0-9])\+"}


@registry.tokenizers("spacy_struct.BiomedicalTokenizer.v1")
def create_biomedical_tokenizer() -> Callable[[Language], Tokenizer]:
    """The language's own tokenizer with the infix and suffix rules above.

    RETURNS: a function from the `Language` to its Tokenizer, as
        `[nlp.tokenizer]` blocks take.
    """

    def make_tokenizer(nlp: Language) -> Tokenizer:
        tokenizer = registry.tokenizers.get("spacy.Tokenizer.v1")()(nlp)
        tokenizer.infix_finditer = compile_infix_regex(INFIXES).finditer
        suffixes = [s for s in nlp.Defaults.suffixes or [] if s not in DROPPED_SUFFIXES] + EXTRA_SUFFIXES
        tokenizer.suffix_search = compile_suffix_regex(suffixes).search
        return tokenizer

    return make_tokenizer
