"""The run engine: the phase contract, running and resuming a run, its rows, files, locks and commits."""
