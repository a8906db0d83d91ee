"""sleep package. It completes the engine's phase registry: the first :func:`~git_memhtml.sleep.engine.contract.
phase_specs` call imports :mod:`git_memhtml.sleep.phases`, whose modules register their specs.

On demand rather than here at import: a hook that only reconciles landed runs (``sleep.landing.reconcile``) would
otherwise load every phase module and numpy-heavy helper, about 0.35 s per hook (measured on the dev box).
"""

from git_memhtml.sleep.engine.contract import set_phase_loader


def _load_phases() -> None:
    from git_memhtml.sleep import phases  # noqa: PLC0415  (deferred: see the module docstring)

    del phases


set_phase_loader(_load_phases)
