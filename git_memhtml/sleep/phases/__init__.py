"""The phase bodies: every module of this package is imported, and each phase module registers its
:class:`~git_memhtml.sleep.engine.contract.PhaseSpec` with the engine (helper modules register nothing).

Imported by ``git_memhtml.sleep`` itself, so the registry is complete before any run; the import checks it total
(:func:`~git_memhtml.sleep.engine.contract.phase_specs` raises ``ImportError`` naming a missing phase).
"""

from __future__ import annotations

import importlib
import pkgutil

from git_memhtml.sleep.engine.contract import phase_specs

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

phase_specs()
