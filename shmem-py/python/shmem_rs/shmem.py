"""OpenSHMEM for Python on shmem-rs, with shmem4py's API (``from shmem_rs import shmem``).

The module is made by the extension (``shmem_rs._native``), with no Python source to read at
each start; this file stands in for it when a program writes ``import shmem_rs.shmem``, and
replaces itself with it. Its types are in ``shmem.pyi``.
"""

import sys

from . import _shmem

sys.modules[__name__] = _shmem()
