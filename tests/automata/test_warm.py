"""warm_compile_kernels loads the kernels a first compile would otherwise load itself."""

from __future__ import annotations

import subprocess
import sys


def test_kernels_are_loaded_in_a_fresh_process(tmp_path):
    code = (
        "from constrain.automata import join, product, reach\n"
        "from constrain.automata.warm import warm_compile_kernels\n"
        "kernels = (product.start, product.expand, reach.reaches_accepting, join.join)\n"
        "assert not any(k.signatures for k in kernels)\n"
        "warm_compile_kernels()\n"
        "assert all(k.signatures for k in kernels), [k.py_func.__name__ for k in kernels if not k.signatures]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)  # (cwd: the installed package, not the source tree)
