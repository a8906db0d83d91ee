"""Landing a run on the trunk: the landing rail, merge, rebase, forge pull requests, reconciliation."""
