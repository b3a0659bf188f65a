"""`python -m constrain ...`: the same command line as the `constrain` console script."""

import sys

from .cli import main

sys.exit(main())
