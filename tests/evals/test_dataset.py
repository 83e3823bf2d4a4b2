"""Datasets load from every source into validated tasks; a bad row names its file, line and field."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agentlab.errors import ConfigError
from agentlab.evals import Dataset, DatasetError, EvalTask, MissingDatasetsError, load_dataset
from agentlab.sweeps import sim_tools

ROWS: list[dict[str, Any]] = [
    {"id": "q1", "input": "Is it warmer in Paris or Rome?", "target": "Rome", "level": "easy"},
    {"input": "What is 12 * (3 + 4)?", "target": 84, "tools": ["calculator"], "system": "Be brief."},
]


def _check(ds: Dataset) -> None:
    assert [t.input for t in ds] == [r["input"] for r in ROWS]
    q1, q2 = ds.tasks
    assert q1.id == "q1" and q1.target == "Rome" and q1.metadata == {"level": "easy"} and q1.tools is None
    assert q2.id.startswith("task-") and q2.tools == ("calculator",) and q2.system == "Be brief."
    assert float(q2.target or 0) == 84
    assert [t.name for t in ds.tools] == [t.name for t in sim_tools()]


def test_from_a_list_of_dicts() -> None:
    _check(load_dataset(ROWS, tools=sim_tools()))


def test_from_a_dataframe() -> None:
    _check(load_dataset(pd.DataFrame(ROWS), tools=sim_tools()))


def test_from_jsonl(tmp_path: Path) -> None:
    p = tmp_path / "tasks.jsonl"
    p.write_text("# a comment\n" + "\n".join(json.dumps(r) for r in ROWS) + "\n\n")
    _check(load_dataset(p, tools=sim_tools()))


def test_from_csv(tmp_path: Path) -> None:
    p = tmp_path / "tasks.csv"
    pd.DataFrame(ROWS).assign(tools=["", "calculator"]).to_csv(p, index=False)
    ds = load_dataset(p, tools={t.name: t for t in sim_tools()})
    assert ds.tasks[1].tools == ("calculator",) and ds.tasks[0].metadata == {"level": "easy"}
    assert ds.tasks[1].target == "84"  # CSV cells are text; numeric scorers parse it


def test_field_mapping_and_stable_ids() -> None:
    rows = [{"question": "What is 6 * 7?", "answer": "42", "src": "x"}]
    a = load_dataset(rows, fields={"input": "question", "target": "answer"})
    b = load_dataset(rows, fields={"input": "question", "target": "answer"})
    assert (
        a.tasks[0].id == b.tasks[0].id and a.tasks[0].target == "42" and a.tasks[0].metadata == {"src": "x"}
    )
    assert load_dataset([{"input": "What is 6 * 7?", "target": "41"}]).tasks[0].id != a.tasks[0].id


def test_a_hugging_face_dataset_object() -> None:
    import datasets  # type: ignore[import-untyped,unused-ignore]  # the `datasets` extra is in dev

    # columnar, as every Hugging Face dataset is: a row's absent field is None in its column
    columns = {
        k: [str(r[k]) if k == "target" else r.get(k) for r in ROWS]
        for k in ("id", "input", "target", "level", "tools", "system")
    }
    _check(load_dataset(datasets.Dataset.from_dict(columns), tools=sim_tools()))


def test_hugging_face_by_name_without_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "datasets" else real(n, *a))
    monkeypatch.delitem(sys.modules, "datasets", raising=False)
    with pytest.raises(MissingDatasetsError, match=r"pip install 'agentlab\[datasets\]'"):
        load_dataset("hf:openai/gsm8k")


@pytest.fixture
def hf_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hub switched off and the datasets cache in tmp_path: these tests never reach the network."""
    import datasets  # type: ignore[import-untyped,unused-ignore]

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def test_hugging_face_by_name_loads_a_dataset_folder(hf_offline: Path) -> None:
    folder = hf_offline / "my-tasks"
    folder.mkdir()
    (folder / "train.jsonl").write_text(
        "".join(json.dumps({**r, "target": str(r["target"])}) + "\n" for r in ROWS)
    )
    _check(load_dataset(f"hf:{folder}", tools=sim_tools()))


def test_hugging_face_bad_row_names_the_source_row_and_field(hf_offline: Path) -> None:
    folder = hf_offline / "bad"
    folder.mkdir()
    (folder / "train.jsonl").write_text('{"input": "fine"}\n{"input": ""}\n')
    with pytest.raises(DatasetError, match=rf"hf:{folder} row 1: field 'input'") as e:
        load_dataset(f"hf:{folder}")
    assert "\n" not in str(e.value)


def test_hugging_face_unknown_name_is_one_typed_line(hf_offline: Path) -> None:
    with pytest.raises(
        DatasetError, match=r"^hf:nobody/no-such-dataset-xyz: Hugging Face could not load it"
    ) as e:
        load_dataset("hf:nobody/no-such-dataset-xyz")
    assert "\n" not in str(e.value) and e.value.__cause__ is None


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ('{"id": "a", "target": "x"}', r"tasks.jsonl:3: field 'input' is missing"),
        ('{"id": "a", "input": 5}', r"tasks.jsonl:3: field 'input': Input should be a valid string"),
        ('{"id": "bad id!", "input": "hi"}', r"tasks.jsonl:3: field 'id': Value error, must be 1-128"),
        (
            '{"id": "a", "input": "hi", "tools": ["nope"]}',
            r"task a: field 'tools': unknown tool\(s\) \['nope'\]",
        ),
        ('{"id": "a", "input": "hi", "metadata": [1]}', r"tasks.jsonl:3: field 'metadata'"),
        ('{"id": "q0", "input": "again"}', r"tasks.jsonl:3: field 'id': duplicate task id 'q0' \(first at "),
        ("[1, 2]", r"tasks.jsonl:3: a task row must be an object"),
        ("{not json", r"tasks.jsonl:3: not valid JSON"),
    ],
)
def test_a_bad_jsonl_row_names_file_line_and_field(tmp_path: Path, line: str, match: str) -> None:
    p = tmp_path / "tasks.jsonl"
    p.write_text('{"id": "q0", "input": "first"}\n\n' + line + "\n")
    with pytest.raises(DatasetError, match=match) as e:
        load_dataset(p, tools=sim_tools())
    assert "\n" not in str(e.value) and isinstance(e.value, ConfigError)


def test_a_bad_csv_row_names_its_line(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text('id,input,target\na,"two\nlines",x\nb,,y\n')
    with pytest.raises(DatasetError, match=r"t.csv:4: field 'input' is missing"):
        load_dataset(p)


def test_bad_sources() -> None:
    with pytest.raises(DatasetError, match="a dataset is a list of dicts"):
        load_dataset(42)
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset("nowhere.jsonl")
    with pytest.raises(DatasetError, match="no tasks"):
        load_dataset([])
    with pytest.raises(ConfigError, match="not fields: \\['question'\\]"):
        load_dataset(ROWS, fields={"question": "input"})


def test_a_task_runs_as_a_sweep_task() -> None:
    t = EvalTask(id="q", input="Hi there", target="x", tools=("calculator",), system="S")
    st = t.sweep_task()
    assert (st.id, st.prompt, st.tools, st.system, st.expected) == (
        "q",
        "Hi there",
        ("calculator",),
        "S",
        None,
    )


class _FakeHFDataset:
    """Stands in for ``datasets.Dataset`` (not installed here): iterable rows, from the datasets package."""

    __module__ = "datasets.arrow_dataset"

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.rows)


def test_a_hugging_face_style_dataset_is_read_row_by_row() -> None:
    _check(load_dataset(_FakeHFDataset(ROWS), tools=sim_tools()))
    with pytest.raises(DatasetError, match=r"dataset row 0: field 'input' is missing"):
        load_dataset(_FakeHFDataset([{"question": "x"}]))


def test_a_slice_is_a_dataset_with_the_same_tools() -> None:
    ds = load_dataset(ROWS, tools=sim_tools(), name="pilot")
    head = ds[:1]
    assert isinstance(head, Dataset) and [t.id for t in head] == ["q1"]
    assert head.tools == ds.tools and head.name == "pilot"
    assert ds[1] is ds.tasks[1] and ds[-1].system == "Be brief."
