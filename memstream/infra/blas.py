"""How many threads numpy's OpenBLAS may use in this process.

The worker's numeric work is many small products (recall's MMR similarities, the gate's
nearest neighbours) run from several threads beside the agents and projections. OpenBLAS
splits even a 60 x 384 product over its own threads; on a machine whose cores are busy,
the calling thread then waits for those threads to be scheduled: on a loaded 2-core
machine that was most of a recall's MMR step (11 ms of ~13). Each output element is still
computed by one thread with the same kernel, so the numbers do not change.
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

# the set-threads entry points of the OpenBLAS builds numpy wheels ship (64-bit ints)
_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


def limit_blas_threads(threads: int) -> bool:
    """Use at most ``threads`` OpenBLAS threads (0: leave OpenBLAS's default). False when
    numpy's OpenBLAS was not found (another BLAS: its own settings apply)."""
    if threads <= 0:
        return True
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")
    for path in glob.glob(libs):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(ctypes.c_int(threads))
                return True
    return False
