"""The ``shmemrun`` and ``oshrun`` commands of the package: the launcher of the Rust build
(``shmem-run``), run inside this interpreter."""

import os
import shutil
import sys


def main() -> None:
    """Run the launcher with this process's command line; exits with the job's status."""
    # Hosts started by --hosts run this same command as their host agent.
    me = shutil.which(sys.argv[0]) or os.path.abspath(sys.argv[0])
    os.environ.setdefault("SHMEM_AGENT", me)
    from . import _native

    _native.launcher_main([sys.argv[0], *sys.argv[1:]])


if __name__ == "__main__":
    main()
