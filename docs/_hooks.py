"""mkdocs hooks: the notebooks as tutorials, and every figure or table that code can produce.

Why generated: a table typed into a page goes stale the day the code changes (the README once said
its longest function was 76 lines when it was 112). Here the tutorials are the notebooks as saved
(outputs and charts included, never re-executed by the build), and the providers, simulated models,
diagnostics codes, error tree, public API and performance tables are read from the code and from
``bench/results.json`` each time the site is built.
"""

from __future__ import annotations

import html
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


def _first_line(obj: Any) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return doc[0].rstrip(".") if doc else ""


def _cell(text: str) -> str:
    return html.escape(text).replace("|", "\\|")


def providers_table() -> str:
    """Every registered provider: its API family, key variable and simulated models."""
    from agentlab.adapters.registry import get_provider, provider_names

    rows = ["| model string | provider | wire protocol | key variable | simulated models |"]
    rows.append("|---|---|---|---|---|")
    for name in provider_names():
        spec = get_provider(name)
        sims = ", ".join(f"`{name}:{m}`" for m in spec.simulated_model_names() or ()) or "none"
        key = f"`{spec.api_key_env}`" if spec.api_key_env else "none"
        alias = "".join(f" (alias `{a}:`)" for a in spec.aliases)
        rows.append(f"| `{name}:<model>`{alias} | {_cell(spec.label)} | {spec.api} | {key} | {sims} |")
    return "\n".join(rows)


def options_table() -> str:
    """Every provider's declared ``provider_options`` rules: owned keys, typed keys, neutral twins."""
    from agentlab.adapters.registry import get_provider, provider_names

    def names(keys: Any, prefix: str) -> str:
        return ", ".join(f"`{prefix}{k}`" for k in sorted(keys)) or "none"

    rows = ["| provider | keys agentlab builds (refused) | typed keys | keys that set a neutral knob |"]
    rows.append("|---|---|---|---|")
    for name in provider_names():
        spec = get_provider(name)
        rules, prefix = spec.options, spec.option_prefix
        twins = ", ".join(
            f"`{prefix}{k}` = {' or '.join(f'`{n}`' for n in ((v,) if isinstance(v, str) else v))}"
            for k, v in sorted(rules.neutral.items())
        ) or "none"
        rows.append(f"| `{name}` | {names(rules.owned, prefix)} | {names(rules.types, prefix)} | {twins} |")
    return "\n".join(rows)


def diagnostics_table() -> str:
    """Every registered diagnostic code, its meaning and its payload fields."""
    import agentlab.loop.runner  # noqa: F401  (imports the adapters, which register their codes)
    from agentlab.adapters.registry import get_provider, provider_names
    from agentlab.neutral.diagnostics import registered

    for name in provider_names():  # a provider package registers its own codes at import
        importlib.import_module(get_provider(name).adapter.split(":")[0])
    rows = ["| code | meaning | payload fields |", "|---|---|---|"]
    for code, entry in sorted(registered().items()):
        fields = ", ".join(f"`{f}`" for f in entry.payload.model_fields) or "none"
        rows.append(f"| `{code}` | {_cell(entry.meaning)} | {fields} |")
    return "\n".join(rows)


def error_tree() -> str:
    """The error classes of ``agentlab.errors`` as a tree, each with its docstring's first line."""
    from agentlab import errors

    lines: list[str] = []

    def walk(cls: type[Exception], depth: int) -> None:
        lines.append(f"{'    ' * depth}- `{cls.__name__}`: {_cell(_first_line(cls))}")
        subs = [c for c in cls.__subclasses__() if c.__module__ == errors.__name__]
        for sub in sorted(subs, key=lambda c: c.__name__):
            walk(sub, depth + 1)

    walk(errors.AgentlabError, 0)
    return "\n".join(lines)


def api_table() -> str:
    """Every name in ``agentlab.__all__``, the module that holds it, and what it is."""
    import agentlab

    rows = ["| name | module | what it is |", "|---|---|---|"]
    for name in agentlab.__all__:
        obj = getattr(agentlab, name)
        module = agentlab._EXPORTS[name]
        rows.append(f"| [`{name}`](api.md#{module}.{name}) | `{module}` | {_cell(_first_line(obj))} |")
    return "\n".join(rows)


def api_page() -> str:
    """The API reference: one mkdocstrings block per public name, grouped by module."""
    import agentlab

    by_module: dict[str, list[str]] = {}
    for name in agentlab.__all__:
        by_module.setdefault(agentlab._EXPORTS[name], []).append(name)
    out = ["# API reference", "", "Generated from the docstrings of every name in `agentlab.__all__`.", ""]
    for module, names in sorted(by_module.items()):
        out += [f"## `{module}`", ""]
        out += [f"::: {module}.{name}\n    options:\n      heading_level: 3\n" for name in names]
    return "\n".join(out)


def bench_table() -> str:
    """The stored benchmark run, as ``python -m bench --table`` prints it."""
    if str(ROOT) not in sys.path:  # bench/ is not an installed package (mkdocs restores sys.path
        sys.path.insert(0, str(ROOT))  # after loading this module, so it is added here, at use)
    from bench.__main__ import stamped_table

    return stamped_table(json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8")))


_GENERATORS = {
    "providers_table": providers_table,
    "diagnostics_table": diagnostics_table,
    "options_table": options_table,
    "error_tree": error_tree,
    "api_table": api_table,
    "bench_table": bench_table,
}


@event_priority(100)  # before mkdocs-jupyter, which turns the notebook files into pages
def on_files(files: Files, config: Any) -> Files:
    """Add the notebooks (as saved) as tutorial pages, and the generated API page."""
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        # src_dir is the repository root, so the page is notebooks/<name> and the file is read where
        # it lives (mkdocs-jupyter rebuilds the File from src_dir and src_uri).
        files.append(File(f"notebooks/{nb.name}", src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))  # fmt: skip
    files.append(File.generated(config, "reference/api.md", content=api_page()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Fill each ``{{ name }}`` placeholder with the table its generator makes now."""
    for name, make in _GENERATORS.items():
        token = "{{ " + name + " }}"
        if token in markdown:
            markdown = markdown.replace(token, make())
    return markdown
