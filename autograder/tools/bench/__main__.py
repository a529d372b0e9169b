"""``python -m autograder.tools.bench``: see the package's docstring."""
import sys

from .cli import main

sys.exit(main())
