"""Session hooks: what an agent's prompt and end-of-session hooks run (docs/session.md).

``events`` reads the hook's JSON event per agent, ``pack`` frames a recall pack as memory data for that agent, and
``run`` holds the two bodies (recall, trace). Nothing here writes a memory, bumps an access or commits; the time
bound and the silence on failure are the CLI's (``cli/session_cmds.py``).
"""
