"""Lark grammars → rules for the stack matcher (see translate.py)."""
