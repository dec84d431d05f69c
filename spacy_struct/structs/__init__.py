"""Structure decoders: numpy arrays in, numpy arrays out, no spaCy import."""
