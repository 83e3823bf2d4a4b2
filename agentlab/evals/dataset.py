"""Evaluation datasets: validated tasks from a list, a pandas frame, CSV, JSONL or Hugging Face.

Why a task model of its own beside :class:`agentlab.sweeps.Task`: an evaluation's task carries a
*target* and metadata for scorers, not a checker; it runs as a sweep task (:meth:`EvalTask.sweep_task`:
the same id, the input as its prompt, its own system prompt and tool names), so the sweep's results
file, resume and budget rules hold unchanged.

Each row becomes an :class:`EvalTask`. Column names are the field names (``id``, ``input``,
``target``, ``choices``, ``metadata``, ``tools``, ``system``); ``fields={"input": "question"}`` maps a
source's own names onto them, and every other column goes into ``metadata``. A task without an id
gets ``task-<hash>`` of its content (input, target, choices, system, tools), so the id is stable
across loads and keys a resumed evaluation.

A bad row raises :class:`DatasetError` (a ``ConfigError``) naming the file and line (or the row
number), and the field: one line, before anything runs.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentlab.errors import ConfigError, MissingExtraError, one_line
from agentlab.loop.tools import Tool, as_tools
from agentlab.sweeps.tasks import Task, jsonl_rows

__all__ = ["Dataset", "DatasetError", "EvalTask", "MissingDatasetsError", "load_dataset"]

_ID = re.compile(r"[\w.:@/-]{1,128}")
_FIELDS = ("id", "input", "target", "choices", "metadata", "tools", "system")


class DatasetError(ConfigError):
    """A dataset row that is not a valid task: the message names the file and line (or row) and field."""


class MissingDatasetsError(MissingExtraError):
    """Loading by Hugging Face name needs the optional ``datasets`` package (the ``datasets`` extra)."""

    def __init__(self) -> None:
        self.feature, self.package, self.extra = "Loading a Hugging Face dataset", "datasets", "datasets"
        ConfigError.__init__(
            self,
            "Loading a Hugging Face dataset needs the optional package 'datasets': "
            "pip install 'agentlab[datasets]'",
        )


class EvalTask(BaseModel):
    """One evaluation task: what the model is asked, and what scorers compare its answer with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """Keys the results (with model, setting, repeat): 1-128 letters, digits or ``_.:@/-``."""
    input: str
    """The prompt the model gets (the run's user message)."""
    target: str | int | float | None = None
    """The reference answer scorers compare with (``None``: scorers that need one score ``None``)."""
    choices: tuple[str, ...] = ()
    """The options of a multiple-choice task, lettered A, B, C... by the ``choice`` scorer."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else about the task (every unmapped column lands here); never sent to the model."""
    tools: tuple[str, ...] | None = None
    """Names of the tools this task may use (``None``: every tool the evaluation has)."""
    system: str | None = None
    """This task's system prompt (``None``: the setting's)."""

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not _ID.fullmatch(v):
            raise ValueError("must be 1-128 letters, digits or _.:@/- characters")
        return v

    @field_validator("input")
    @classmethod
    def _input_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must be a non-empty string")
        return v

    def sweep_task(self) -> Task:
        """The sweep task this runs as (scored by the evaluation's scorers, not a sweep checker)."""
        return Task(prompt=self.input, id=self.id, system=self.system, tools=self.tools)


def content_id(row: Mapping[str, Any]) -> str:
    """``task-<hash>`` of what the model sees and what it is scored against (metadata left out)."""
    keys = ("input", "target", "choices", "system", "tools")
    data = json.dumps({k: row.get(k) for k in keys}, sort_keys=True, default=str)
    return "task-" + hashlib.sha256(data.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Dataset:
    """Validated tasks (unique ids) and the tools they may name."""

    tasks: tuple[EvalTask, ...]
    tools: tuple[Tool, ...] = ()
    name: str = "dataset"

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[EvalTask]:
        return iter(self.tasks)

    @overload
    def __getitem__(self, i: int) -> EvalTask: ...
    @overload
    def __getitem__(self, i: slice) -> Dataset: ...
    def __getitem__(self, i: int | slice) -> EvalTask | Dataset:
        """A task by position, or a slice as a Dataset with the same tools (a pilot on the first ten)."""
        if isinstance(i, slice):
            return replace(self, tasks=self.tasks[i])
        return self.tasks[i]

    def by_id(self) -> dict[str, EvalTask]:
        """Tasks by id (scoring a results row finds its task here)."""
        return {t.id: t for t in self.tasks}


def _missing(v: Any) -> bool:
    """Empty CSV cells and pandas' NaN/None are "not given"."""
    if v is None or (isinstance(v, str) and v == ""):
        return True
    return isinstance(v, float) and math.isnan(v)


def _names(v: Any) -> Any:
    """A tools/choices cell: a list as is, a JSON list in text, or comma-separated names in text."""
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                return json.loads(s)
            except json.JSONDecodeError:
                return v
        return [p.strip() for p in s.split(",") if p.strip()]
    return list(v) if isinstance(v, tuple) else v


def _shape(raw: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """A source row in task fields: renamed by ``fields``, unknown columns into ``metadata``."""
    src = {fields.get(k, k): k for k in _FIELDS}  # source column -> task field
    row: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for col, v in raw.items():
        name = src.get(str(col))
        if name is None:
            if not _missing(v):
                meta[str(col)] = v
        elif not _missing(v):
            row[name] = v
    given = row.pop("metadata", {})
    if isinstance(given, str):
        with contextlib.suppress(json.JSONDecodeError):  # if not JSON, the validation names the field
            given = json.loads(given)
    row["metadata"] = {**given, **meta} if isinstance(given, dict) else given
    for k in ("tools", "choices"):
        if k in row:
            row[k] = _names(row[k])
    if isinstance(row.get("id"), int) and not isinstance(row.get("id"), bool):
        row["id"] = str(row["id"])
    return row


def _task(raw: Any, where: str, fields: Mapping[str, str]) -> EvalTask:
    """One row to a task, or ``DatasetError`` naming ``where`` and the first bad field."""
    if not isinstance(raw, Mapping):
        raise DatasetError(f"{where}: a task row must be an object/dict, got {type(raw).__name__}")
    row = _shape(raw, fields)
    if "input" not in row:
        col = fields.get("input", "input")
        raise DatasetError(f"{where}: field {col!r} is missing (the task's input)")
    row.setdefault("id", content_id(row))
    try:
        return EvalTask.model_validate(row)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "row"
        raise DatasetError(f"{where}: field {loc!r}: {err['msg']}") from None


def _csv_rows(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        start = 2
        for raw in reader:
            if None in raw:
                raise DatasetError(f"{path}:{start}: more cells than the header has columns")
            yield f"{path}:{start}", raw
            start = reader.line_num + 1


def _file_rows(path: Path) -> Iterator[tuple[str, Any]]:
    if not path.exists():
        raise DatasetError(f"dataset file {path} does not exist")
    if path.suffix == ".csv":
        return _csv_rows(path)
    if path.suffix in (".jsonl", ".ndjson"):
        return jsonl_rows(path, DatasetError)
    raise DatasetError(f"{path}: a dataset file is .csv or .jsonl, got {path.suffix or 'no suffix'!r}")


def _hf_rows(source: str, split: str | None) -> Iterator[tuple[str, Any]]:
    """``hf:owner/name``: loaded with ``datasets.load_dataset`` (the optional package)."""
    import importlib
    import importlib.util

    if importlib.util.find_spec("datasets") is None:
        raise MissingDatasetsError()
    datasets: Any = importlib.import_module("datasets")
    try:
        ds = datasets.load_dataset(source[3:], split=split or "train")
    except Exception as e:  # the hub's and the builders' many error types: one typed line naming the source
        why = f"{type(e).__name__}: {one_line(str(e))[:200]}"
        raise DatasetError(f"{source}: Hugging Face could not load it ({why})") from None
    return ((f"{source} row {i}", r) for i, r in enumerate(ds))


def _rows(source: Any, split: str | None) -> Iterator[tuple[str, Any]]:
    """``(where, row)`` for every row of any supported source."""
    if isinstance(source, str) and source.startswith("hf:"):
        return _hf_rows(source, split)
    if isinstance(source, str | Path):
        return _file_rows(Path(source))
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        return ((f"DataFrame row {i}", r) for i, r in enumerate(source.to_dict(orient="records")))
    if type(source).__module__.split(".")[0] == "datasets":  # a Hugging Face Dataset
        return ((f"dataset row {i}", r) for i, r in enumerate(source))
    if isinstance(source, Mapping) or not isinstance(source, Iterable):
        raise DatasetError(
            "a dataset is a list of dicts, a pandas DataFrame, a .csv/.jsonl path, a Hugging Face "
            f"Dataset or 'hf:owner/name'; got {type(source).__name__}"
        )
    return ((f"task #{i}", r) for i, r in enumerate(source))


def _resolve_tools(tasks: Sequence[EvalTask], tools: Any) -> tuple[Tool, ...]:
    """The tools mapping or list, checked once; every name a task gives must be in it."""
    if tools is None:
        table: dict[str, Tool] = {}
    elif isinstance(tools, Mapping):
        table = {}
        for name, t in tools.items():
            (tool,) = as_tools([t]).values()
            if tool.name != name:
                raise ConfigError(f"tools[{name!r}] is the tool {tool.name!r}; key each tool by its name")
            table[name] = tool
    else:
        table = as_tools(tools)
    for t in tasks:
        unknown = sorted(set(t.tools or ()) - set(table))
        if unknown:
            raise DatasetError(
                f"task {t.id}: field 'tools': unknown tool(s) {unknown}; known: {sorted(table)}"
            )
    return tuple(table.values())


def load_dataset(
    source: Any,
    *,
    tools: Mapping[str, Any] | Iterable[Any] | None = None,
    fields: Mapping[str, str] | None = None,
    split: str | None = None,
    name: str | None = None,
) -> Dataset:
    """Tasks from a list of dicts, a DataFrame, a ``.csv`` / ``.jsonl`` path or a Hugging Face dataset.

    ``tools``: the tools tasks may name (``{name: tool}`` or a list); ``fields``: task field -> the
    source's column (``{"input": "question", "target": "answer"}``); ``split``: for ``"hf:owner/name"``
    sources. A :class:`Dataset` passes through (with ``tools`` added when given). Duplicate ids and
    bad rows raise :class:`DatasetError` naming where.
    """
    if isinstance(source, Dataset):
        return (
            source
            if tools is None
            else Dataset(source.tasks, _resolve_tools(source.tasks, tools), source.name)
        )
    tasks = load_tasks_only(source, fields=fields, split=split)
    label = name or (Path(source).stem if isinstance(source, str | Path) else "dataset")
    return Dataset(tuple(tasks), _resolve_tools(tasks, tools), label)


def load_tasks_only(
    source: Any, *, fields: Mapping[str, str] | None = None, split: str | None = None
) -> list[EvalTask]:
    """The validated tasks of ``source`` without resolving their tool names (re-scoring needs no tools)."""
    if isinstance(source, Dataset):
        return list(source.tasks)
    fmap = dict(fields or {})
    bad = sorted(set(fmap) - set(_FIELDS))
    if bad:
        raise ConfigError(f"fields= maps task fields {list(_FIELDS)}; not fields: {bad}")
    tasks: list[EvalTask] = []
    seen: dict[str, str] = {}
    for where, raw in _rows(source, split):
        task = _task(raw, where, fmap)
        if task.id in seen:
            raise DatasetError(
                f"{where}: field 'id': duplicate task id {task.id!r} (first at {seen[task.id]})"
            )
        seen[task.id] = where
        tasks.append(task)
    if not tasks:
        raise DatasetError("the dataset has no tasks")
    return tasks
