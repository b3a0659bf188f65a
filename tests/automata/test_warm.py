"""warm_compile_kernels loads the kernels a first compile would otherwise load itself."""

from __future__ import annotations

from constrain.automata import join, product, reach
from constrain.automata.warm import warm_compile_kernels


def test_kernels_are_loaded():
    warm_compile_kernels()
    for kernel in (product.start, product.expand, reach.reaches_accepting, join.join):
        assert kernel.signatures, kernel.py_func.__name__
