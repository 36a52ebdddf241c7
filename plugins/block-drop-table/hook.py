"""Denies destructive SQL (DROP TABLE, TRUNCATE) in Bash commands outside migrations."""

import posixpath
import re

from warden_sdk import HookResult, hook

IDENT = r"""(?:"[^"]+"|`[^`]+`|\[[^\]]+\]|[A-Za-z_][\w$]*)(?:\.(?:"[^"]+"|`[^`]+`|[A-Za-z_][\w$]*))*"""

# `DROP TABLE`, anywhere in the command: in `psql -c "..."`, a heredoc, `sqlite3 db '...'`.
# `DROP TABLESPACE`, `DROP TEMPORARY TABLE`, `DROP DATABASE` are not matched (see README).
DROP_TABLE = re.compile(r"\bdrop\s+table\b(?:\s+if\s+exists)?(?:\s+" + IDENT + r")?", re.I)

# SQL `TRUNCATE`: `TRUNCATE TABLE x`, or `TRUNCATE [ONLY] x[, y]` ending the statement (`;`, a
# closing quote or parenthesis, the end, or CASCADE/RESTRICT/RESTART/CONTINUE). This keeps
# coreutils' `truncate -s 0 file` and prose such as "truncate long lines" out.
TRUNCATE = re.compile(
    r"\btruncate\s+(?:table\b(?:\s+only\b)?(?:\s+" + IDENT + r")?"
    r"|(?:only\s+)?" + IDENT + r"(?:\s*,\s*" + IDENT + r")*"
    r"(?=\s*(?:;|$|[\"')`]|\s(?:cascade|restrict|restart|continue)\b)))",
    re.I,
)

# A leading `cd DIR &&` (repeatable). `cd DIR;` does not count: the rest runs even if cd fails.
LEADING_CD = re.compile(r"""\s*cd\s+("[^"]*"|'[^']*'|[^\s;&|()'"]+)\s*&&""")
# Any other change of directory makes the place the SQL runs in unknown.
LATER_CD = re.compile(r"(?:^|[\s;&|(`])(?:cd|pushd|popd)(?:\s|$|[;&|)])")


def in_migrations(path: str) -> bool:
    """Whether a path has a segment named `migrations`, or `db` then `migrate`."""
    parts = [p.lower() for p in posixpath.normpath(path).split("/")]
    if "migrations" in parts:
        return True
    return any(a == "db" and b == "migrate" for a, b in zip(parts, parts[1:]))


def where_it_runs(cwd: str, command: str):
    """The directory the command runs in: `cwd`, moved by leading `cd DIR &&`; None if unknown."""
    where = cwd
    rest = command
    while True:
        m = LEADING_CD.match(rest)
        if not m:
            break
        target = m.group(1)
        if target[:1] in "\"'":
            target = target[1:-1]
        if target == "-":
            return None
        where = posixpath.join(where, target) if where else target
        rest = rest[m.end():]
    if LATER_CD.search(rest):
        return None
    return posixpath.normpath(where) if where else where


def findings(command: str):
    """The destructive statements in the command: (kinds in order of appearance, first match)."""
    hits = sorted(
        [(m.start(), "DROP TABLE", m.group(0)) for m in DROP_TABLE.finditer(command)]
        + [(m.start(), "TRUNCATE", m.group(0)) for m in TRUNCATE.finditer(command)]
    )
    kinds = []
    for _, kind, _ in hits:
        if kind not in kinds:
            kinds.append(kind)
    first = " ".join(hits[0][2].split())[:80] if hits else ""
    return kinds, first


@hook
def handle(event):
    if event.name != "PreToolUse" or event.tool_name != "Bash":
        return HookResult.none()
    command = event.command
    if not command:
        return HookResult.none()
    kinds, first = findings(command)
    if not kinds:
        return HookResult.none()
    where = where_it_runs(event.cwd, command)
    if where is not None and in_migrations(where):
        return HookResult.none()
    if where:
        place = f"in {where}"
    elif where is None:
        place = "in a directory this hook cannot tell (only a leading `cd DIR &&` counts)"
    else:
        place = "in an unknown directory (the event has no cwd)"
    return HookResult.deny(
        f"Destructive SQL ({' and '.join(kinds)}): found `{first}` in a Bash command that runs "
        f"{place}, which is not a migrations directory. Dropping or truncating a table destroys "
        "its data. If this is a schema change, write it as a migration and run it from the "
        "migrations directory (a `migrations/` or `db/migrate/` path, e.g. "
        "`cd db/migrations && psql -f 002_drop_users.sql`); otherwise ask the user to run it "
        "themselves."
    )
