"""Names ``vulture`` cannot see being used, each with the reason (issue 9 item 9; run by tests/test_dead_code.py).

vulture reads this file next to ``git_memhtml`` and counts every name written here as used. It is real Python:
mypy checks it like any test module, so an entry whose name no longer exists fails the type check instead of
lingering. It is never imported at run time. Add a name here only for one of the reasons below; anything else
vulture reports is dead code to delete.
"""

from __future__ import annotations

from http.server import ThreadingHTTPServer

from git_memhtml.artifacts.listings import publish
from git_memhtml.cli.agent_cmds import agent_install_cmd, agent_uninstall_cmd
from git_memhtml.cli.config_cmds import config_cmd
from git_memhtml.cli.demo import demo_cmd
from git_memhtml.cli.doctor_cmds import doctor_cmd, verify_cmd
from git_memhtml.cli.eval_cmds import discriminate_cmd
from git_memhtml.cli.hooks_cmds import hook_cmd, install_cmd, merge_driver_cmd, uninstall_cmd
from git_memhtml.cli.index_cmds import rebuild_cmd, status_cmd, update_cmd
from git_memhtml.cli.lazy import LazyGroup
from git_memhtml.cli.man_cmds import man_cmd
from git_memhtml.cli.mcp_cmds import mcp_cmd
from git_memhtml.cli.memory_cmds import (
    apply_cmd,
    archive_cmd,
    correct_cmd,
    init_cmd,
    link_cmd,
    list_cmd,
    read_cmd,
    write_cmd,
)
from git_memhtml.cli.retrieval_cmds import neighbors_cmd, recall_cmd, reinforce_cmd, search_cmd
from git_memhtml.cli.session_cmds import recall_cmd as session_recall_cmd
from git_memhtml.cli.session_cmds import trace_cmd as session_trace_cmd
from git_memhtml.cli.sleep_cmds import (
    abort_cmd,
    merge_cmd,
    plan_cmd,
    pr_cmd,
    rebase_cmd,
    resume_cmd,
    review_cmd,
    run_cmd,
)
from git_memhtml.cli.sleep_cmds import status_cmd as sleep_status_cmd
from git_memhtml.cli.task_cmds import task_add_cmd, task_list_cmd, task_status_cmd
from git_memhtml.cli.trace_cmds import index_cmd as trace_index_cmd
from git_memhtml.cli.trace_cmds import links_cmd as trace_links_cmd
from git_memhtml.cli.trace_cmds import search_cmd as trace_search_cmd
from git_memhtml.cli.validate_cmd import validate_cmd
from git_memhtml.config import Settings
from git_memhtml.document.hash import is_content_hash
from git_memhtml.document.model import MemoryDocument
from git_memhtml.domain.entities import may_merge
from git_memhtml.domain.merge import MergeOutcome
from git_memhtml.domain.reinforce import apply_reinforcement
from git_memhtml.domain.retention import SignalVector
from git_memhtml.domain.rrf import rrf_fuse
from git_memhtml.eval.corpus import FixtureCorpus, Probe
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import IndexStatus
from git_memhtml.index.project import FileRow
from git_memhtml.llm.scripted import ScriptedClient, offered_keys
from git_memhtml.llm.scripted_server import ScriptedHandler
from git_memhtml.sleep.engine import contract
from git_memhtml.sleep.engine.env import DetectionBudget, ModelUsage, RunServices
from git_memhtml.sleep.engine.tokens import counter_name
from git_memhtml.sleep.phases.compress import CompressCounts
from git_memhtml.sleep.phases.confidence_decay import ConfidenceDecayCounts
from git_memhtml.sleep.phases.dedup_merge import DedupMergeCounts
from git_memhtml.sleep.phases.edge_typing import EdgeTypingCounts
from git_memhtml.sleep.phases.entity_resolution import EntityResolutionCounts
from git_memhtml.sleep.phases.person_links import PersonLinksCounts
from git_memhtml.sleep.phases.placement_triage import PlacementTriageCounts
from git_memhtml.sleep.phases.preflight import PreflightCounts
from git_memhtml.sleep.phases.reprieve import ReprieveCounts
from git_memhtml.sleep.phases.retention_triage import RetentionTriageCounts
from git_memhtml.sleep.phases.task_detection import TaskDetectionCounts
from git_memhtml.sleep.phases.tasks import TaskTally
from git_memhtml.sleep.phases.trace_consolidation import TraceConsolidationCounts
from git_memhtml.store.ops import LinkOp, OpLine, op_schema_markdown, op_schema_text
from git_memhtml.traces.model import Link as TraceLink

__all__ = [
    "CLICK_COMMANDS",
    "CONTRACT_VIEWS",
    "LAZY_COMMANDS",
    "MODEL_LAYER_SLOTS",
    "PYDANTIC_HOOKS",
    "SCRIPTED_MODEL",
    "STDLIB_HOOKS",
    "TEST_ORACLES",
    "TOKEN_COUNTER_NAME",
    "detection_budget",
    "phase_counts_fields",
    "record_fields",
    "settings_fields",
]

CLICK_COMMANDS = (
    discriminate_cmd, rebuild_cmd, update_cmd, status_cmd, plan_cmd, run_cmd, resume_cmd, sleep_status_cmd,
    review_cmd, merge_cmd, rebase_cmd, abort_cmd, pr_cmd, trace_index_cmd, trace_search_cmd, trace_links_cmd,
    session_recall_cmd, session_trace_cmd,
)
"""Click commands: registered on their group by decorator, called by click, never by name."""

LAZY_COMMANDS = (
    config_cmd, demo_cmd, doctor_cmd, verify_cmd, hook_cmd, install_cmd, merge_driver_cmd, uninstall_cmd, man_cmd,
    apply_cmd, archive_cmd, correct_cmd, init_cmd, link_cmd, list_cmd, read_cmd, write_cmd, neighbors_cmd, recall_cmd,
    reinforce_cmd, search_cmd, validate_cmd, LazyGroup.format_commands, task_add_cmd, task_status_cmd, task_list_cmd,
    agent_install_cmd, agent_uninstall_cmd,
    mcp_cmd,
)
"""Commands named by a ``"module:attribute"`` string in a lazy table (cli/main.py ``COMMAND_TABLE``, the index
group's table), imported on first use; ``format_commands`` is called by click when it prints a group's help."""

PYDANTIC_HOOKS = (
    LinkOp.model_config, OpLine.model_config,
    LinkOp._known_rel, OpLine._one_line_id, OpLine._type_name_entities, OpLine._writable, OpLine._one_door,
)
"""Pydantic reads ``model_config`` and calls ``@field_validator``/``@model_validator`` methods itself."""


STDLIB_HOOKS = (ThreadingHTTPServer.daemon_threads, ThreadingHTTPServer.block_on_close,
                ScriptedHandler.protocol_version, ScriptedHandler.do_POST, ScriptedHandler.log_message,
                ScriptedHandler.disable_nagle_algorithm)
"""Attributes the stdlib HTTP server reads or calls by name: ``socketserver.ThreadingMixIn`` decides from the first
two whether handler threads are daemons and whether ``server_close`` waits for them (the scripted model server sets
both so a stalled reply never blocks shutdown); ``BaseHTTPRequestHandler`` reads ``protocol_version`` and
dispatches ``POST`` to ``do_POST`` and logs through ``log_message``; ``StreamRequestHandler`` sets ``TCP_NODELAY``
when ``disable_nagle_algorithm`` is true."""


def settings_fields(s: Settings) -> tuple[object, ...]:
    """Settings fields read by key (``config.py`` resolves ``memhtml.<key>`` and ``MEMHTML_<KEY>`` by name)."""
    return (s.llm, s.weight_fts, s.weight_vector, s.weight_recency, s.weight_salience)


def record_fields(
    v: SignalVector, o: MergeOutcome, d: MemoryDocument, p: Probe, c: FixtureCorpus, st: IndexStatus, f: FileRow,
    t: TaskTally, k: TraceLink,
) -> tuple[object, ...]:
    """Fields of value records read through ``astuple``/``fields``/``getattr`` (SignalVector.values, FileRow's
    INSERT columns, TaskTally.add, a trace link's kind in ``trace links``'s ``asdict`` rows), or kept so a record
    states the whole outcome and its tests read it (the MergeOutcome buckets, the parsed ``content-hash`` meta, the
    fixture's probes and arguments, the status count).
    """
    return (
        v.bridge, v.density, v.contested, o.below_threshold, o.self_pairs, d.content_hash_meta, p.target_title,
        p.target_claim, c.requested_probes, st.embeddings, f.fts_text, f.indexed_at, f.due_at, f.frame_key,
        f.article_facts, f.stub, t.unverified, k.link_kind,
    )




def detection_budget(b: DetectionBudget) -> tuple[object, ...]:
    """The detection budget's overflow count (incremented past the cap, not reported until the model phases detect
    tasks) and the cap itself (the budget's default)."""
    return (b.overflow, contract.DETECTED_TASK_CAP)


TEST_ORACLES = (rrf_fuse, apply_reinforcement, may_merge, is_content_hash, publish, op_schema_markdown,
                op_schema_text, IndexDB.applied_migrations)
"""Reference functions only tests call, each checking a property of shipped code: ``rrf_fuse`` and
``apply_reinforcement`` are held to the SQL (tests/index/test_sql_matches_domain.py); ``may_merge`` is the pairwise
rule every resolved cluster must satisfy; ``is_content_hash`` the shape ``content_hash`` returns; ``publish`` the
integrity phase's regeneration without its repair; ``op_schema_markdown`` regenerates docs/apply.md's table
and ``op_schema_text`` the ``apply -h`` schema of ``cli/op_schema_help.py``;
``applied_migrations`` reads the migration ledgers."""

SCRIPTED_MODEL = (ScriptedClient, offered_keys, ModelUsage.rejected)
"""The in-process scripted model (a real implementation of ``llm.contract.ModelClient`` that plays a script) and the
reader of a batch prompt's keys: the test double every model-phase test binds, and what its responders answer
with (docs/models.md §1.6), and the total of a usage's rail refusals the phase tests assert. Nothing in the product
binds it."""

def phase_counts_fields(
    c0: CompressCounts,
    c1: EdgeTypingCounts,
    c2: TaskDetectionCounts,
    c3: TraceConsolidationCounts,
    c4: ConfidenceDecayCounts,
    c5: DedupMergeCounts,
    c6: EntityResolutionCounts,
    c7: PersonLinksCounts,
    c8: PreflightCounts,
    c9: ReprieveCounts,
    c10: RetentionTriageCounts,
    c11: PlacementTriageCounts,
) -> tuple[object, ...]:
    """Fields of the phases' counts records: written by keyword, read by ``PhaseCounts.wire`` through
    ``dataclasses.fields`` (the wire shape of the report, the trailer and the state row)."""
    return (
        c0.batches,
        c0.canonicals,
        c0.pass1_groups,
        c0.pass1_batches,
        c0.pass1_canonicals,
        c0.pass2_groups,
        c0.pass2_batches,
        c0.pass2_canonicals,
        c0.pass3_groups,
        c0.pass3_batches,
        c0.pass3_canonicals,
        c1.judged,
        c2.batches,
        c3.sessions,
        c3.consolidated,
        c3.commitment_tasks,
        c3.commitments_skipped,
        c3.commitments_below_floor,
        c3.commitments_refreshed,
        c3.commitments_framed,
        c3.commitments_dismissed,
        c3.commitments_capped,
        c4.skipped_type,
        c4.not_due,
        c4.eligible,
        c4.below_gate,
        c4.decayed,
        c5.llm_groups,
        c5.tasks_minted,
        c5.tasks_refreshed,
        c5.tasks_framed,
        c5.tasks_dismissed,
        c5.tasks_closed,
        c5.tasks_capped,
        c6.fuzzy_merges,
        c6.llm_merges,
        c6.alias_merges,
        c6.pending_corroboration,
        c6.review_candidates,
        c6.names_kept_apart,
        c6.tasks_minted,
        c6.tasks_refreshed,
        c6.tasks_framed,
        c6.tasks_dismissed,
        c6.tasks_closed,
        c6.tasks_capped,
        c6.files_rewritten,
        c7.files_created,
        c7.links_added,
        c11.new_folders,
        c11.unknown_key,
        c11.repeat_key,
        c11.bad_folder,
        c11.lookalike,
        c11.collision,
        c8.derived_edges,
        c8.indexed_added,
        c8.indexed_modified,
        c8.indexed_removed,
        c8.indexed_renamed,
        c8.index_skipped,
        c8.vector_coverage,
        c9.ttl_passed,
        c9.reprieved,
        c9.expired,
        c10.compress,
        c10.evict,
        c10.evicted,
    )


MODEL_LAYER_SLOTS = (RunServices.llm_budget,)
"""The run's call budget: read by sleep/engine/model.py, set from ``--max-llm-calls``."""

CONTRACT_VIEWS = (contract.model_phases, contract.non_committing_phases, contract.sweep_phases)
"""The contract's derived phase sets: tests/sleep/test_phase_registry.py holds them to the seed's tables."""

TOKEN_COUNTER_NAME = (counter_name,)
"""What counts a request's tokens: printed by bench/model_phases.py, checked by tests/sleep/test_tokens.py."""
