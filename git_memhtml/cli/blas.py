"""How many threads numpy's BLAS starts, decided by the entry points before numpy is first imported."""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables numpy's BLAS (OpenBLAS in numpy's wheels; MKL or an OpenMP build elsewhere) reads for its thread
count when numpy is first imported."""
MATRIX_COMMANDS = frozenset({"sleep", "demo"})
"""The commands whose work includes matrix-matrix products (the all-pairs cosine of dedup-merge and relationship
mining, ``domain/neighbors.py``), where BLAS threads pay; ``demo`` runs a sleep cycle. Every other command's matrix
work is one matrix-vector product per query, within about 1 ms of the threaded one at 100k rows."""


def limit_blas_threads(args: Sequence[str], environ: MutableMapping[str, str]) -> None:
    """Give BLAS one thread (``OPENBLAS_NUM_THREADS=1`` in ``environ``) unless a word of ``args`` (a command line
    without the program name) is one of :data:`MATRIX_COMMANDS`, or one of :data:`BLAS_THREAD_VARIABLES` is already
    set (the user's choice stands). A path or query that happens to be spelled ``sleep`` only keeps the default.
    Has an effect only before numpy is imported: the entry points (``cli.main.run``, ``cli.hook_entry.main``) call
    it first.

    Why (docs/cli.md "Start-up", figures of this 2-core machine, median of 25–30 interleaved runs): OpenBLAS starts
    one thread per core at import and they spin while they wait. ``import numpy`` costs 235 ms of CPU with two
    threads and 128 ms with one, and a cold ``search`` on 10k memories 492 ms against 378 ms, for a matrix-vector
    product two threads do about 1 ms faster at 100k rows (3.5 against 4.7 ms). The variable is inherited by the
    processes a command starts (git, and the hooks git runs), whose matrix work is as small.
    """
    if any(name in environ for name in BLAS_THREAD_VARIABLES):
        return
    if not any(word in MATRIX_COMMANDS for word in args):
        environ["OPENBLAS_NUM_THREADS"] = "1"
