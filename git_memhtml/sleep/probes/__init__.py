"""The run gate: probes on the user's own memory, computed from a run's base and tip (docs/gate.md §9).

Layered between ``engine`` (run resolution, the journal) and ``presentation`` (``sleep review`` shows the verdict):
``sample`` picks the claim probes, ``pointers`` reads what the run says replaced what, ``indexes`` opens or builds
the two indexes, ``families`` runs the three probe families, ``attribution`` names the phase that touched a lost
memory, ``verdict`` holds the figures and ``gate`` puts them together.
"""
