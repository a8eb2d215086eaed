"""Where each page and data file lives inside the built site. The JavaScript in
static/dashboard.js reads only the paths these functions write into the pages and data files
(it never builds a path itself), so this module is the one place the scheme is defined."""

from __future__ import annotations

from torch_bench.render.model import Series, run_file_key, safe_key

STATIC_DIR = "static"
PLOTLY_FILE = f"{STATIC_DIR}/plotly.min.js"
INDEX_PAGE = "index.html"
TRAINING_PAGE = "training.html"
COMPARE_PAGE = "compare.html"
RUNS_INDEX = "data/runs.json"
BENCHMARKS_INDEX = "data/benchmarks.json"
TRAINING_DATA = "data/training.json"


def suite_page(suite: str) -> str:
    return f"suites/{safe_key(suite, suite)}.html"


def benchmark_page(series: Series) -> str:
    return f"benchmarks/{series.key}.html"


def series_data(series: Series) -> str:
    return f"data/series/{series.key}.json"


def run_data(run_id: str) -> str:
    return f"data/runs/{run_file_key(run_id)}.json"


def root_of(page: str) -> str:
    """The relative prefix from a page back to the site's root."""
    return "../" * page.count("/")
