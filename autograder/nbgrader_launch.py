"""nbgrader's command line, as the course's own commands start it (``course.nbgrader``).

Two costs nbgrader pays on every command and every notebook are removed; what nbgrader does is
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

Run as ``python -m autograder.nbgrader_launch ARGS...``, the same as ``nbgrader ARGS...``.
"""
import sys
import types

SERVER_EXTENSIONS = ("assignment_list", "course_list", "validate_assignment", "formgrader")


def skip_server_extensions():
    """Stand-ins for nbgrader's server extensions, for a process that runs no server."""
    def load_jupyter_server_extension(app):
        raise RuntimeError("nbgrader's server extensions are not loaded in a command-line run")
    for name in SERVER_EXTENSIONS:
        module = types.ModuleType(f"nbgrader.server_extensions.{name}")
        module.load_jupyter_server_extension = load_jupyter_server_extension  # type: ignore[attr-defined]
        sys.modules.setdefault(module.__name__, module)


def share_engines():
    """Make every nbgrader ``Gradebook`` of this process reuse one engine per database."""
    from nbgrader import api

    engines = {}
    create_engine = api.create_engine

    def shared_engine(url, **options):
        key = (str(url), tuple(sorted(options.items())))
        if key not in engines:
            engines[key] = create_engine(url, **options)
        return engines[key]

    created = set()
    create_all = api.Base.metadata.create_all

    def create_all_once(bind=None, **options):
        if id(bind) not in created:
            create_all(bind=bind, **options)
            created.add(id(bind))

    api.create_engine = shared_engine
    api.Base.metadata.create_all = create_all_once


def main(argv=None):
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    skip_server_extensions()
    share_engines()
    from nbgrader.apps.nbgraderapp import main as nbgrader
    sys.argv = ["nbgrader", *(sys.argv[1:] if argv is None else argv)]
    return nbgrader()


if __name__ == "__main__":
    sys.exit(main())
