"""`python -m sonnx`: the same command line as the `sonnx` script."""
import sys

from .cli import main

sys.exit(main())
