"""Generated from :func:`git_memhtml.store.ops.op_schema_text` (the pydantic ``OpLine`` model): never edit by hand.

``apply -h`` prints this text without importing pydantic (issue 12 item 4). ``tests/cli/test_help_imports.py``
compares it with the model's text, so it cannot drift; when the model changes, paste the new text here.
"""

from __future__ import annotations

OP_SCHEMA_TEXT = """\
  op (string): the operation; only write exists
  title (string): required; the memory's title (the <title> and <h1>)
  type (string): required; one of episodic, semantic, procedural, agent_insight, user_preference, error_pattern, verdict, precedent, task (arc is written by sleep only)
  claim (string): the one-sentence claim, kept verbatim as the <mark>
  body (string): prose: without claim, its first sentence is the claim; blank lines split paragraphs
  article_html (string): raw inner HTML of the article instead of claim/body (exactly one of the two)
  path (string): explicit repository path <projects|areas|resources>/<folder>/<name>.html (default: placement rules)
  workspace (string): project workspace: the file goes to projects/<workspace>/
  tags (list): list of tags
  tag (string): one more tag
  entities (list): list of type:name entities
  entity (string): one more type:name entity
  aliases (list): other names of the memory's subject
  importance (integer): integer 1-10
  confidence (number): number 0-1
  valid_from (string): ISO instant the fact starts to hold
  valid_until (string): ISO instant the fact stops holding
  links (list): list of {"rel": …, "href": …} head links (rel of the closed vocabulary, href root-relative)
  session_id (string): provenance: the agent session id
  prompt_id (string): provenance: the prompt id
  turn_uuid (string): provenance: the turn id
  status (string): task status, type task only: todo, doing, blocked, done
  due (string): task due date, type task only"""
"""One ``  field (type): description`` line per op field, in model order."""

