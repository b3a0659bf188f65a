"""The benchmarks, installed as `constrain.benchmarks`: run one with `constrain bench NAME` or
`python -m constrain.benchmarks.NAME`, or from a checkout as `python benchmarks/NAME.py`."""
