"""The architecture rules hold on the real ``git_memhtml`` tree (issue 9 item 6; docs/architecture.md).

Each test runs one pure check of ``archrules`` (proven to catch planted violations in
test_architecture_rules.py) over every ``*.py`` of the package and expects no offence. There are no allowlists
beyond the rule's own places (``gitrepo/`` for subprocess, ``cli/``/``config.py`` for the environment …).
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture import archrules as rules

PACKAGE = Path(__file__).resolve().parents[2] / "git_memhtml"
SOURCES = rules.read_package(PACKAGE)


def test_every_room_has_a_layer() -> None:
    rooms = {rules.room_of(rules.module_name(p)) for p in SOURCES}
    placed = {room for layer in rules.LAYERS for room in layer}
    assert rooms - placed == set()
    assert placed - rooms == set(), "the layer table names a room that does not exist"
    sleep_rooms = {rules.room_of(rules.module_name(p), "git_memhtml.sleep") for p in SOURCES if p.startswith("sleep/")}
    assert sleep_rooms == {room for layer in rules.SLEEP_LAYERS for room in layer}


def test_imports_follow_the_layer_table() -> None:
    assert rules.layer_violations(rules.import_edges(SOURCES), rules.LAYERS, rules.ONLY) == []


def test_the_package_import_graph_has_no_cycle() -> None:
    assert rules.cycles(rules.import_edges(SOURCES)) == []


def test_sleep_sub_packages_follow_their_layers() -> None:
    edges = rules.import_edges(SOURCES, "git_memhtml.sleep")
    assert rules.layer_violations(edges, rules.SLEEP_LAYERS) == []


def test_sleep_sub_packages_have_no_cycle() -> None:
    assert rules.cycles(rules.import_edges(SOURCES, "git_memhtml.sleep")) == []


def test_hooks_reach_sleep_only_through_reconcile() -> None:
    assert rules.gateway_violations(SOURCES, rules.GATEWAYS) == []


def test_external_systems_have_one_choke_point_each() -> None:
    assert rules.choke_point_violations(SOURCES, rules.CHOKE_POINTS) == []


def test_only_gitrepo_starts_processes_and_only_the_forge_client_asks_it_to_run_a_program() -> None:
    assert rules.subprocess_violations(SOURCES) == []


def test_only_the_cli_ends_the_process() -> None:
    assert rules.exit_violations(SOURCES) == []


def test_only_cli_and_config_read_the_environment() -> None:
    assert rules.environ_violations(SOURCES) == []


def test_only_output_writes_to_the_terminal() -> None:
    assert rules.terminal_write_violations(SOURCES) == []


def test_sql_lives_only_in_index() -> None:
    assert rules.sql_literal_violations(SOURCES) == []
    assert rules.sql_files_outside_index(PACKAGE) == []


def test_no_module_runs_code_from_a_string() -> None:
    assert rules.dynamic_code_violations(SOURCES) == []
