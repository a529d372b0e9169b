"""The grading settings, declared once.

:class:`Options` is the one definition: each field has its default and its help text, and the
resource limits of a learner's kernel are its nested :class:`~autograder.sandbox.confinement.Limits`.
Everything else is generated from it: the command line's flags (:func:`add_arguments`,
:func:`from_arguments`), nbgrader's settings (the course layer makes one traitlet of each
:func:`settings` entry), the arguments that hand the whole set to another process
(:func:`config_arguments`), and what of it a cached result is keyed by (:func:`result_values`).
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Mapping

from . import relay
from ..sandbox import confinement


def setting(default: Any = dataclasses.MISSING, help: str = "", *, result: bool = True,
            choices: tuple[str, ...] = (), shortcuts: Mapping[str, Any] | None = None,
            factory: Any = dataclasses.MISSING) -> Any:
    """A field of :class:`Options`: ``help`` says what it is; ``result=False`` marks a setting
    that cannot change a result (left out of the cache key); ``shortcuts`` are command-line
    flags that set it to a value (``--no-sandbox``)."""
    metadata = {"help": help, "result": result, "choices": choices,
                "shortcuts": dict(shortcuts or {})}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Options:
    """How notebooks are graded."""
    sandbox: str = setting("auto", "auto, require or off: how learner code is confined (auto: "
                           "the strongest this machine allows; require: bubblewrap or nothing)",
                           choices=("auto", "require", "off"),
                           shortcuts={"--require-sandbox": "require", "--no-sandbox": "off"})
    cell_timeout: float = setting(60.0, "seconds one cell of a notebook may run")
    notebook_timeout: float = setting(300.0, "seconds all cells of a notebook may run together, "
                                      "on the first run")
    call_timeout: float = setting(20.0, "seconds one call of a hidden test may take")
    budget: float = setting(600.0, "seconds for everything one notebook gets: reading it, "
                            "starting its kernel, its cells, replays after crashes and the "
                            "hidden suite")
    max_restarts: int = setting(3, "kernel crashes a notebook survives (replayed from its last "
                                "good cell) before grading gives up on it")
    received_bytes: int = setting(relay.MAX_TOTAL_BYTES, "bytes all of a notebook's kernels may "
                                  "send the grader, in all")
    figures: str = setting("draw", "draw or off: whether the learner's kernel draws their figures "
                           "(matplotlib's inline backend, as in JupyterLab), which feedback "
                           "pages show; off draws none, for results that show no figures "
                           "(Gradescope's, the command line's JSON and CSV): faster for "
                           "notebooks with many figures", choices=("draw", "off"))
    demonstrations: str = setting("skip", "skip or run: whether the cells a notebook marks as "
                                  "demonstrations (locked experiments no grade depends on) are "
                                  "run again; skipped cells show the learner's own figures, and a "
                                  "submission a full run could grade differently is run in full",
                                  choices=("skip", "run"))
    limits: confinement.Limits = setting(factory=confinement.Limits)
    timings: str = setting("", "a file to append each grading stage's seconds to, one JSON line "
                           "per stage (make bench reads it); never part of a result",
                           result=False)

    def confinement(self) -> str:
        """How learner code will be confined here (see
        :func:`~autograder.sandbox.confinement.resolve_mode`)."""
        return confinement.resolve_mode(self.sandbox)


@dataclasses.dataclass(frozen=True)
class Setting:
    """One grading setting, as the command line and nbgrader see it: a flat name."""
    name: str
    type: type
    default: Any
    help: str
    result: bool
    choices: tuple[str, ...]
    shortcuts: dict[str, Any]
    within: str | None  # the nested dataclass field it belongs to ("limits"), if any


def _nested(field: dataclasses.Field[Any]) -> type | None:
    """The dataclass a field holds (``limits``: Limits), or None for a plain value."""
    factory = field.default_factory
    if factory is not dataclasses.MISSING and isinstance(factory, type) \
            and dataclasses.is_dataclass(factory):
        return factory
    return None


def settings(kind: type = Options, within: str | None = None) -> list[Setting]:
    """Every setting of ``kind``, nested dataclasses flattened (their fields' names are unique)."""
    found = []
    for field in dataclasses.fields(kind):
        nested = _nested(field)
        if nested is not None:
            found += settings(nested, field.name)
            continue
        metadata = field.metadata
        found.append(Setting(field.name, type(field.default), field.default,
                             metadata.get("help", ""), metadata.get("result", True),
                             tuple(metadata.get("choices", ())),
                             dict(metadata.get("shortcuts", {})), within))
    return found


def values(options: Options) -> dict[str, Any]:
    """Every setting's value, by its flat name."""
    return {s.name: getattr(getattr(options, s.within) if s.within else options, s.name)
            for s in settings()}


def from_values(given: Mapping[str, Any]) -> Options:
    """Options with the settings in ``given`` (flat names), the rest at their defaults."""
    unknown = set(given) - {s.name for s in settings()}
    if unknown:
        raise ValueError(f"unknown grading settings: {', '.join(sorted(unknown))}")
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for s in settings():
        if s.name in given:
            (nested.setdefault(s.within, {}) if s.within else top)[s.name] = s.type(given[s.name])
    for field in dataclasses.fields(Options):
        kind = _nested(field)
        if kind is not None:
            top[field.name] = kind(**nested.get(field.name, {}))
    return Options(**top)


def result_values(options: Options) -> dict[str, Any]:
    """The settings that can change a result, by name: what a kept result is keyed by."""
    kept = values(options)
    return {s.name: s.type(kept[s.name]) for s in settings() if s.result}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One command-line flag per setting (``--cell-timeout S``), with its help and default."""
    group = parser.add_argument_group("grading settings")
    for s in settings():
        metavar = "MODE" if s.choices else "S" if s.type is float else "N" if s.type is int \
            else "FILE"
        group.add_argument(flag(s.name), dest=s.name, type=s.type, default=s.default,
                           choices=s.choices or None, metavar=metavar,
                           help=s.help + (" (default %(default)s)" if s.default != "" else ""))
        for shortcut, value in s.shortcuts.items():
            group.add_argument(shortcut, dest=s.name, action="store_const", const=value,
                               help=f"{flag(s.name)} {value}")


def from_arguments(args: argparse.Namespace) -> Options:
    """The options the flags of :func:`add_arguments` give."""
    return from_values({s.name: getattr(args, s.name) for s in settings()})


def config_arguments(options: Options, section: str) -> list[str]:
    """All of ``options`` as traitlets command-line settings of ``section``
    (``--HiddenSuiteGrading.cell_timeout=60.0``): how the whole set reaches another process."""
    return [f"--{section}.{name}={value}" for name, value in values(options).items()]
