"""Evaluations: datasets, scorers (a model-graded judge among them) and ``evaluate`` on the sweep machinery.

A core package: it never imports the notebook layer. See ``docs/how-to/evaluate.md``.
"""

from agentlab.evals.dataset import Dataset, DatasetError, EvalTask, MissingDatasetsError, load_dataset
from agentlab.evals.judge import Judge, judge
from agentlab.evals.results import Results, ResultsFormError, as_results, plot_costs
from agentlab.evals.run import (
    REDUCERS,
    EvalResult,
    aevaluate,
    evaluate,
    load_eval,
    reduce_runs,
    rescore,
    runs_table,
)
from agentlab.evals.scorers import (
    Attempt,
    CalledTool,
    JudgeUsage,
    Score,
    Scorer,
    choice,
    exact,
    includes,
    json_valid,
    normalize,
    numeric,
    regex,
    scorer,
    tool_called,
)
from agentlab.evals.views import (
    Disagreements,
    Matrix,
    Transcript,
    disagreements,
    matrix,
    plot_frontier,
    transcript,
)

__all__ = [
    "REDUCERS",
    "Attempt",
    "CalledTool",
    "Dataset",
    "DatasetError",
    "Disagreements",
    "EvalResult",
    "EvalTask",
    "Judge",
    "JudgeUsage",
    "Matrix",
    "MissingDatasetsError",
    "Results",
    "ResultsFormError",
    "Score",
    "Scorer",
    "Transcript",
    "aevaluate",
    "as_results",
    "choice",
    "disagreements",
    "evaluate",
    "exact",
    "includes",
    "json_valid",
    "judge",
    "load_dataset",
    "load_eval",
    "matrix",
    "normalize",
    "numeric",
    "plot_costs",
    "plot_frontier",
    "reduce_runs",
    "regex",
    "rescore",
    "runs_table",
    "scorer",
    "tool_called",
    "transcript",
]
