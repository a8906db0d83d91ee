"""Pure algorithms of git-memhtml (numpy allowed, no I/O, imports nothing else of ours).

Modules: ``merge`` (veto, role guard, components; sleep-eval §3), ``frame`` (frame key; §3), ``decay``
(fixed-point confidence decay; §4.3), ``retention`` (signals, profiles, bands, reprieve; §4.1-4.4), ``reinforce``
(access-plane arithmetic; §4.5), ``graph`` (PageRank, label propagation, bridges; §5.1-5.4), ``neighbors``
(exact cosine pairs; §5.5), ``entities`` (name normalisation, LCS ratio, union-find; §6), ``rrf`` (RRF k=60 and
MMR; core §4), ``salience`` (core §4).
"""
