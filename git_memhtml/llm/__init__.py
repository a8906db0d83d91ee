"""The model layer: one structured call contract over httpx, in two wire dialects (docs/models.md).

``contract`` holds the types every caller sees; the dialects, the transport and the client factory sit beside it.
The sleep phases reach a model only through the batch kernel (``git_memhtml.sleep.engine.batch``).
"""
