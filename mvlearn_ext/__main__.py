"""``python -m mvlearn_ext <command>``; also installed as the ``mvlearn-ext`` script.

Run ``python -m mvlearn_ext --help`` for the commands (``info``, ``demo``).
The implementation is in :mod:`mvlearn_ext._cli`.
"""

import sys

from mvlearn_ext._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
