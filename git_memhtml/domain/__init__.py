"""Pure algorithms of git-memhtml (numpy allowed, no I/O, imports nothing else of ours).

Modules: ``merge`` (veto, role guard, components; docs/veto.md §3), ``frame`` (frame key; docs/veto.md §3), ``decay``
(fixed-point confidence decay; docs/retention.md §4.3), ``retention`` (signals, profiles, bands, reprieve;
docs/retention.md §4.1-4.4), ``reinforce`` (access-plane arithmetic; docs/retention.md §4.5), ``graph`` (PageRank, label
propagation, bridges; docs/graph.md §5.1-5.4), ``neighbors`` (exact cosine pairs; docs/graph.md §5.5), ``entities``
(name normalisation, LCS ratio, union-find; docs/entities.md §6), ``rrf`` (RRF k=60 and MMR; docs/retrieval.md §4),
``salience`` (docs/retrieval.md §4).
"""
