"""Tokenizer vocabularies as exact token bytes: what every grammar is matched against."""

from constrain.vocab.vocabulary import Vocabulary

__all__ = ["Vocabulary"]
