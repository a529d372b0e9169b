"""nbgrader's command line, as the course's own commands start it (``course.nbgrader``).

Costs nbgrader pays on its commands and notebooks are removed; what nbgrader does is
unchanged:

- jsonschema imports ``rfc3987_syntax`` to check IRIs, which nbgrader never asks for, and it
  compiles 38 grammars on import (about 2 s per command). It is kept out.
- nbgrader's package imports its four Jupyter server extensions (and with them jupyter_server
  and tornado) whenever it is imported, which only a Jupyter server uses: about 0.5 s per
  command. Commands started here get stand-ins that say so; ``nbgrader formgrader`` and the
  Jupyter server load the real ones (they never start through this module).
- nbgrader opens a new ``Gradebook`` for each step of each notebook (about nine per notebook when
  autograding), and each one builds a new SQLAlchemy engine and re-creates every table: all its
  queries are compiled again, and the tables reflected again, each time. Here every ``Gradebook``
  of the command shares one engine per database (SQLAlchemy's own advice: one engine per
  database per process), and the tables are created once per engine. Sessions, transactions and
  commits stay exactly nbgrader's.
- nbgrader checks every grade cell's metadata against its schema with ``jsonschema.validate``,
  which first checks the schema itself against the JSON Schema meta-schema: twice per cell and
  notebook (about 40 ms per notebook). Here the schema is checked once per command; each cell is
  still validated, and an invalid one raises the same error (jsonschema's ``best_match``).
- Every ``Gradebook`` asks SQLite for the list of tables to learn whether the database is new,
  then makes sure the course's row exists (a query and a commit): once this process has done
  both on an engine, the answers are known and are not asked again.
- A new gradebook is stamped with the newest revision of nbgrader's database schema, which
  nbgrader learns by running the ``alembic heads`` command (a process of its own, about 1.2 s of
  CPU). Here alembic reads the same revision scripts in this process, once.

Run as ``python -m autograder.course.nbgrader_launch ARGS...``, the same as ``nbgrader ARGS...``.
"""
from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

SERVER_EXTENSIONS = ("assignment_list", "course_list", "validate_assignment", "formgrader")
# the engine of each database (its URL and options) this process's Gradebooks share (share_engines)
ENGINES: dict[tuple[str, tuple[tuple[str, Any], ...]], Engine] = {}


def skip_server_extensions() -> None:
    """Stand-ins for nbgrader's server extensions, for a process that runs no server."""
    def load_jupyter_server_extension(app: object) -> None:
        raise RuntimeError("nbgrader's server extensions are not loaded in a command-line run")
    for name in SERVER_EXTENSIONS:
        module = types.ModuleType(f"nbgrader.server_extensions.{name}")
        module.load_jupyter_server_extension = load_jupyter_server_extension  # type: ignore[attr-defined]
        sys.modules.setdefault(module.__name__, module)


def share_engines() -> None:
    """Make every nbgrader ``Gradebook`` of this process reuse one engine per database."""
    from nbgrader import api

    create_engine = api.create_engine

    def shared_engine(url: object, **options: Any) -> Engine:
        key = (str(url), tuple(sorted(options.items())))
        if key not in ENGINES:
            ENGINES[key] = create_engine(url, **options)
        return ENGINES[key]

    created: set[int] = set()  # the ids of the engines whose tables this process created
    create_all = api.Base.metadata.create_all
    inspect = api.inspect

    def create_all_once(bind: Engine | None = None, **options: Any) -> None:
        if id(bind) not in created:
            create_all(bind=bind, **options)
            created.add(id(bind))

    class Created:
        """What inspect() answers for an engine whose tables this process created."""
        @staticmethod
        def get_table_names() -> list[str]:
            return sorted(api.Base.metadata.tables)

    def inspect_once(engine: Engine) -> Any:
        return Created if id(engine) in created else inspect(engine)

    checked: set[tuple[int, str]] = set()  # (engine id, course id) known to be in the database
    check_course = api.Gradebook.check_course

    def check_course_once(self: Any, course_id: str = "default_course", **kwargs: Any) -> Any:
        key = (id(self.engine), course_id)
        if key in checked and not kwargs:
            return None  # nbgrader's own __init__ ignores the answer
        course = check_course(self, course_id, **kwargs)
        checked.add(key)
        return course

    api.create_engine = shared_engine
    api.Base.metadata.create_all = create_all_once
    api.inspect = inspect_once
    api.Gradebook.check_course = check_course_once


def forget_connections() -> None:
    """In a process forked from one that used the gradebook: leave the parent's database
    connections to the parent (SQLAlchemy's rule for forks); this process opens its own."""
    for engine in ENGINES.values():
        engine.dispose(close=False)


def check_schemas_once() -> None:
    """nbgrader's cell-metadata validation, with each schema checked once per process."""
    import json

    import jsonschema
    from nbgrader.nbgraderformat import common

    validators: dict[str, Any] = {}  # a jsonschema validator for each schema (its JSON)

    def validate(instance: object, schema: dict[str, Any]) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in validators:
            kind = jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)
            validators[key] = kind(schema)
        error = jsonschema.exceptions.best_match(validators[key].iter_errors(instance))
        if error is not None:
            raise error

    common.jsonschema = types.SimpleNamespace(validate=validate)


def alembic_head() -> str:
    """The newest revision of nbgrader's database schema: what the first line of ``alembic
    heads`` names, read by alembic from nbgrader's revision scripts in this process."""
    from alembic.script import ScriptDirectory
    from nbgrader import dbutil
    head: str = ScriptDirectory(dbutil.ALEMBIC_DIR).get_current_head() or ""
    return head


def read_schema_revision_in_process() -> None:
    """nbgrader's ``get_alembic_version`` without its ``alembic`` process, answered once."""
    import functools

    from nbgrader import api
    api.get_alembic_version = functools.cache(alembic_head)


def prepare() -> None:
    """Everything above, before nbgrader is imported (also used by autograder.course.recorder)."""
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    skip_server_extensions()
    share_engines()
    check_schemas_once()
    read_schema_revision_in_process()


def main(argv: Sequence[str] | None = None) -> Any:
    prepare()
    from nbgrader.apps.nbgraderapp import main as nbgrader
    sys.argv = ["nbgrader", *(sys.argv[1:] if argv is None else argv)]
    return nbgrader()


if __name__ == "__main__":
    sys.exit(main())
