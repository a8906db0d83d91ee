"""What a run says replaced what (git_memhtml/sleep/probes/pointers.py): targets of a base memory, journaled renames
re-judged by the identity veto and the model rail's name rule, archive moves read from a real tree diff (issue 10 items
1 and 2, issue 27 item 3)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from git_memhtml.domain.entities import CENTROID_AGREEMENT
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.journal import EntityRenamed, Folded, JournalEntry, MergeVetoed
from git_memhtml.sleep.probes.pointers import RunPointers, Target, archive_moves, read_pointers, renamed_keys

LIVE, GONE = False, True


def _pointers(**kw: object) -> RunPointers:
    status = {"a.html": LIVE, "k.html": LIVE, "archive/2026/d.html": GONE, "k2.html": LIVE,
              "archive/2026/k.html": GONE, "archive/2026/e.html": GONE, "twin.html": LIVE}
    base: dict[str, object] = {"archived_at": {"d.html": "archive/2026/d.html", "e.html": "archive/2026/e.html"},
                               "keepers": {}, "status": status}
    base.update(kw)
    return RunPointers(**base)  # type: ignore[arg-type]


TARGETS = [
    ("live memory is its own target", {}, "a.html", [Target("a.html", "self")]),
    ("live memory with a live successor", {"keepers": {"a.html": ["k.html"]}}, "a.html",
     [Target("a.html", "self"), Target("k.html", "superseded")]),
    ("folded into a live keeper", {"keepers": {"archive/2026/d.html": ["k.html"]}}, "d.html",
     [Target("k.html", "folded")]),
    ("a chain of folds reaches the live end", {"keepers": {"archive/2026/d.html": ["archive/2026/k.html"],
                                                          "archive/2026/k.html": ["k2.html"]}}, "d.html",
     [Target("k2.html", "folded")]),
    ("a cycle of archived keepers ends at the archived copy",
     {"keepers": {"archive/2026/d.html": ["archive/2026/k.html"], "archive/2026/k.html": ["archive/2026/d.html"]}},
     "d.html", [Target("archive/2026/d.html", "archived", archived=True)]),
    ("archived with no keeper: the copy itself", {}, "e.html", [Target("archive/2026/e.html", "archived", True)]),
    ("vanished without an archive copy", {}, "nowhere.html", []),
    ("archived to a path the tip does not index", {"archived_at": {"d.html": "archive/2026/missing.html"}}, "d.html",
     []),
]


@pytest.mark.parametrize(("label", "kw", "path", "expected"), TARGETS, ids=[t[0] for t in TARGETS])
def test_targets(label: str, kw: dict[str, object], path: str, expected: list[Target]) -> None:
    assert _pointers(**kw).targets(path) == expected


def test_a_twin_is_never_a_target() -> None:
    pointers = _pointers(keepers={"archive/2026/d.html": ["twin.html"]})
    assert pointers.targets("d.html", exclude=frozenset({"twin.html"})) == []


def _repo(tmp_path: Path) -> tuple[GitRepo, str, str]:
    root = tmp_path / "r"
    root.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout

    git("init", "-q", "-b", "main")
    for name in ("areas/x/a.html", "areas/x/b.html", "areas/x/c.html"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"<p>{name}</p>\n")
    (root / "archive/2025/areas/x").mkdir(parents=True)
    (root / "archive/2025/areas/x/c.html").write_text("older archive\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD").strip()
    (root / "archive/2026/areas/x").mkdir(parents=True)
    git("mv", "areas/x/a.html", "archive/2026/areas/x/a.html")
    git("mv", "areas/x/c.html", "archive/2026/areas/x/c-2.html")
    (root / "areas/x/b.html").unlink()
    git("add", "-A")
    git("commit", "-qm", "tip")
    return GitRepo.discover(root), base, git("rev-parse", "HEAD").strip()


def test_archive_moves_pair_deletions_with_archive_additions(tmp_path: Path) -> None:
    repo, base, tip = _repo(tmp_path)
    assert archive_moves(repo, base, tip) == {"areas/x/a.html": "archive/2026/areas/x/a.html",
                                              "areas/x/c.html": "archive/2026/areas/x/c-2.html"}


RENAMES = [
    ("a separator variant is accepted", EntityRenamed("service", "checkout api", "checkout-api"), True),
    ("a spelling merge is no evidence", EntityRenamed("service", "postgres", "postgresql"), False),
    ("one word for another is refused", EntityRenamed("service", "reporting-gateway", "recording-gateway"), False),
    ("spacing and separators only", EntityRenamed("service", "checkout api", "checkout_api"), True),
    ("one digit apart is refused", EntityRenamed("service", "svc-amber-20", "svc-amber-2"), False),
    ("a version is refused", EntityRenamed("service", "payments-v1", "payments-v2"), False),
    ("a variant qualifier is refused", EntityRenamed("product", "checkout-service-pro", "checkout-service"), False),
    ("a case change is no rename at all", EntityRenamed("org", "DGIA", "dgia"), None),
    ("two unrelated names are refused", EntityRenamed("service", "ledger-sync", "billing-core"), False),
    ("an unrelated person is refused without a person file", EntityRenamed("person", "Bob", "Robert Smith"), False),
]


@pytest.mark.parametrize(("label", "entry", "accepted"), RENAMES, ids=[r[0] for r in RENAMES])
def test_journaled_renames_need_evidence(tmp_path: Path, label: str, entry: EntityRenamed,
                                                             accepted: bool | None) -> None:
    repo, base, tip = _repo(tmp_path)
    pointers = read_pointers(repo, base, tip, status={}, supersedes={}, journal=[entry])
    old = f"{entry.entity_type}:{entry.old}".casefold()
    if accepted is None:
        assert pointers.renames == {} and pointers.refused == {}
    elif accepted:
        assert pointers.entity_names(old) == {old, f"{entry.entity_type}:{entry.new}".casefold()}
        assert pointers.refused == {}
    else:
        assert pointers.entity_names(old) == {old}
        assert [r.new for r in pointers.refused[old]] == [f"{entry.entity_type}:{entry.new}"]


def test_a_person_file_on_the_tip_backs_an_alias_rename(tmp_path: Path) -> None:
    repo, base, tip = _repo(tmp_path)
    entry = EntityRenamed("person", "Bob", "Robert Smith")
    backed = read_pointers(repo, base, tip, status={}, supersedes={}, journal=[entry],
                           groups=[("bob", "robert smith")])
    assert backed.entity_names("person:bob") == {"person:bob", "person:robert smith"}
    elsewhere = read_pointers(repo, base, tip, status={}, supersedes={}, journal=[entry],
                              groups=[("bob", "bobby")])  # a group that does not join the two names
    assert elsewhere.entity_names("person:bob") == {"person:bob"}
    assert elsewhere.refused["person:bob"][0].why.startswith("no evidence joins")
    written_like = read_pointers(repo, base, tip, status={}, supersedes={},
                                 journal=[EntityRenamed("person", "priya_raman", "Priya R.")],
                                 groups=[("priya raman", "priya r.")])  # old is a member written another way
    assert written_like.entity_names("person:priya_raman") == {"person:priya_raman", "person:priya r."}
    service = read_pointers(repo, base, tip, status={}, supersedes={},
                            journal=[EntityRenamed("service", "ledger-sync", "billing-core")],
                            groups=[("billing-core", "ledger-sync")])  # alias groups speak for persons only
    assert service.entity_names("service:ledger-sync") == {"service:ledger-sync"}


def test_renames_close_transitively_vetoes_are_read_and_journaled_folds_are_not_pointers(tmp_path: Path) -> None:
    repo, base, tip = _repo(tmp_path)
    journal: list[JournalEntry] = [
        EntityRenamed("tool", "observ-ability", "observability"),
        EntityRenamed("tool", "Observ Ability", "observ-ability"),
        Folded("areas/x/k.html", "areas/x/a.html", "archive/2026/areas/x/a.html"),
        MergeVetoed("areas/x/k.html", "areas/x/b.html", ("numeric",)),
    ]
    pointers = read_pointers(repo, base, tip, status={}, supersedes={}, journal=journal)
    assert pointers.entity_names("tool:observ ability") == {"tool:observ ability", "tool:observ-ability",
                                                            "tool:observability"}
    assert "archive/2026/areas/x/a.html" not in pointers.keepers  # a folded line alone is a claim, not a pointer
    assert pointers.vetoed == (("areas/x/k.html", "areas/x/b.html"),)


def test_alias_groups_at_are_read_from_the_commit_not_the_work_tree(tmp_path: Path) -> None:
    from git_memhtml.sleep.probes.pointers import alias_groups_at
    from tests.sleep.sleep_corpus_helpers import memory

    repo, _, tip = _repo(tmp_path)
    root = repo.root
    person = root / "resources/people/priya-raman.html"
    person.parent.mkdir(parents=True)
    person.write_text(memory("Priya Raman runs the payments team.", entities=["person:Priya Raman"],
                             aliases=["Priya", "P. Raman"]))
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "person"], check=True)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    person.write_text(memory("Priya Raman runs the payments team.", entities=["person:Priya Raman"],
                             aliases=["Someone Else"]))  # an uncommitted edit is never read
    assert alias_groups_at(repo, head) == [("p. raman", "priya", "priya raman")]
    assert alias_groups_at(repo, tip) == []


def test_alias_groups_at_read_person_files_wherever_they_are_filed(tmp_path: Path) -> None:
    """The gate's alias evidence is the same rule as entity-resolution's: a person file says what it is. One under an
    explicit path counts; a fact filed under ``resources/people/`` that declares an alias but names two people
    does not."""
    from git_memhtml.sleep.probes.pointers import alias_groups_at
    from tests.sleep.sleep_corpus_helpers import memory

    repo, _, _ = _repo(tmp_path)
    root = repo.root
    files = {
        "areas/team/priya-raman.html": memory("Priya Raman runs the payments team.", title="Priya Raman",
                                              entities=["person:Priya Raman"], aliases=["Priya"]),
        "resources/people/bo-lind-met-anna-berg.html": memory(
            "Bo Lind met Anna Berg.", entities=["person:Bo Lind", "person:Anna Berg"], aliases=["Anna"]),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "people"], check=True)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    assert alias_groups_at(repo, head) == [("priya", "priya raman")]


def test_a_replacement_the_merge_veto_refuses_is_no_replacement() -> None:
    from git_memhtml.sleep.probes.pointers import veto_replacements

    pointers = _pointers(keepers={"archive/2026/d.html": ["k.html"], "archive/2026/e.html": ["k2.html"]})
    base = {"d.html": ("Migrations should not run during business hours.", ""),
            "e.html": ("The cache holds 40 entries.", "")}
    tip = {"k.html": ("Migrations should run during business hours.", ""),
           "k2.html": ("The cache holds 40 entries per node.", "")}
    pointers.vetoed_replacements = veto_replacements(pointers, base, tip)
    assert pointers.vetoed_replacements == {("d.html", "k.html"): ("negation",)}
    assert pointers.targets("d.html") == []  # folded into its own negation: lost, not explained
    assert pointers.targets("e.html") == [Target("k2.html", "folded")]


def _cosine(value: float | None) -> Callable[[str, str], float | None]:
    """A base whose two renamed names' centroids have cosine ``value`` (``None``: no vectors)."""
    return lambda _a, _b: value


NAME_FORMS = [
    ("one person's name in two forms whose memories agree", EntityRenamed("person", "Caroline M.", "Caroline"),
     CENTROID_AGREEMENT + 0.1, ()),
    ("the full name to the given name", EntityRenamed("person", "Laith Al-Saadoon", "Laith"), 0.8, ()),
    ("one name in two forms whose memories disagree", EntityRenamed("person", "Caroline M.", "Caroline"),
     CENTROID_AGREEMENT - 0.1, ("centroids-disagree",)),
    ("one name in two forms with no vectors on the base", EntityRenamed("person", "Caroline M.", "Caroline"),
     None, ("no-centroid",)),
    ("two different people, however alike", EntityRenamed("person", "Dana Okafor", "Priya Raman"), 0.99,
     ("not-one-name",)),
    ("two services the prompt calls distinct", EntityRenamed("service", "checkout-api", "payments-api"), 0.99,
     ("not-one-name",)),
    ("a leading word of a service is no shorter form", EntityRenamed("service", "kafka-connect", "kafka"), 0.99,
     ("not-one-name",)),
    ("two initials one letter apart", EntityRenamed("person", "Caroline N.", "Caroline M."), 0.99, ("short-name",)),
]


@pytest.mark.parametrize(("label", "entry", "cosine", "reasons"), NAME_FORMS, ids=[r[0] for r in NAME_FORMS])
def test_a_rename_between_two_forms_of_one_name_is_judged_by_the_rail_s_rule(
    tmp_path: Path, label: str, entry: EntityRenamed, cosine: float | None, reasons: tuple[str, ...]
) -> None:
    """The gate reads the rule the model stage's rail reads (domain.entities.name_merge_refusal), over the base's
    centroids, so a merge the rail lets through is explained and one it refuses never is (issue 27 item 3)."""
    repo, base, tip = _repo(tmp_path)
    asked: list[tuple[str, str]] = []

    def measured(a: str, b: str) -> float | None:
        asked.append((a, b))
        return _cosine(cosine)(a, b)

    pointers = read_pointers(repo, base, tip, status={}, supersedes={}, journal=[entry], cosine=measured)
    old, new = (f"{entry.entity_type}:{n}".casefold() for n in (entry.old, entry.new))
    if not reasons:
        assert pointers.entity_names(old) == {old, new} and pointers.refused == {}, label
        assert asked == [(old, new)]
    else:
        assert pointers.entity_names(old) == {old}, label
        (refused,) = pointers.refused[old]
        assert refused.reasons == reasons, label
    assert renamed_keys([entry]) == {old, new}


def test_a_refused_rename_says_why_in_the_lost_probe_s_words(tmp_path: Path) -> None:
    repo, base, tip = _repo(tmp_path)
    entry = EntityRenamed("person", "Caroline M.", "Caroline")
    low = read_pointers(repo, base, tip, status={}, supersedes={}, journal=[entry], cosine=_cosine(0.1))
    assert "their memories do not agree" in low.refused["person:caroline m."][0].why
    none = read_pointers(repo, base, tip, status={}, supersedes={}, journal=[entry])
    assert "no vector on the base" in none.refused["person:caroline m."][0].why
def test_a_replacement_that_says_more_is_a_replacement_and_one_about_others_is_not() -> None:
    """The run gate reads what compress folds by (docs/veto.md §4): a canonical carrying two members' numbers stands
    for each; a replacement that drops a member's number, or is about another person, stands for nothing."""
    from git_memhtml.sleep.probes.pointers import veto_replacements

    moved = {p: f"archive/2026/{p}" for p in ("a.html", "b.html", "m.html")}
    status = {"c.html": LIVE, "k.html": LIVE, **dict.fromkeys(moved.values(), GONE)}
    pointers = _pointers(archived_at=moved, status=status, keepers={
        "archive/2026/a.html": ["c.html"], "archive/2026/b.html": ["c.html"], "archive/2026/m.html": ["k.html"]})
    base = {"a.html": ("The checkout timeout is 10 seconds.", ""),
            "b.html": ("Checkout retries wait 30 seconds.", ""),
            "m.html": ("Melanie values her friendship.", "")}
    tip = {"c.html": ("The checkout timeout is 10 seconds.", "Retries wait 30 seconds."),
           "k.html": ("Caroline values her friendship.", "")}
    mel, car = frozenset({"person:melanie"}), frozenset({"person:caroline"})
    vetoed = veto_replacements(pointers, base, tip, base_subjects={"m.html": mel}, tip_subjects={"k.html": car})
    assert vetoed == {("m.html", "k.html"): ("subject",)}
    assert veto_replacements(pointers, {"a.html": ("The checkout timeout is 20 seconds.", "")}, tip) == {
        ("a.html", "c.html"): ("numeric",)}


def test_subjects_by_path_follow_accepted_renames_and_base_aliases() -> None:
    from git_memhtml.sleep.probes.pointers import subjects_by_path

    pointers = _pointers()
    pointers.renames = {"service:checkout_api": {"service:checkout-api"}}
    keys = {"a.html": frozenset({"person:caro", "concept:x"}), "b.html": frozenset({"lang:py"}),
            "c.html": frozenset({"service:checkout_api"})}
    out = subjects_by_path(keys, [("caro", "caroline")], pointers)
    assert out == {"a.html": frozenset({"person:caro"}), "c.html": frozenset({"service:checkoutapi"})}
