"""Front ends: grammar sources (JSON Schema, Python types, ...) lowered to the automata IR."""
