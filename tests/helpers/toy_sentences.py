"""Toy documents of a few sentences each, with their sentence starts: what
the senter tests train on."""
import random

from spacy.tokens import Doc
from spacy.training import Example

WORDS = "the cat sat . a dog ran away . birds sing loudly today . it rained".split()


def toy_sentence_examples(nlp, n=40, seed=0):
    """n Examples of 2-4 toy sentences, each ending in '.', with their
    starts (the predicted side is the text through nlp's tokenizer)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words, starts = [], []
        for _ in range(rng.randint(2, 4)):
            sentence = rng.sample(WORDS[:-1], rng.randint(2, 5)) + ["."]
            words += sentence
            starts += [True] + [False] * (len(sentence) - 1)
        reference = Doc(nlp.vocab, words=words, sent_starts=starts)
        out.append(Example(nlp.make_doc(" ".join(words)), reference))
    return out
