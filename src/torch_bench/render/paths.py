"""Where each page and data file lives inside the built site. The JavaScript in
static/dashboard.js reads only the paths these functions write into the pages and data files
(it never builds a path itself), so this module is the one place the scheme is defined."""

from __future__ import annotations

from torch_bench.render.model import Series, safe_key

# The build's cache and its content keys are read by the publish too: store/previous_site.py.
from torch_bench.store.previous_site import BUILD_CACHE_DIR, RENDER_KEYS  # noqa: F401

# The site's own data files live under "json/", not "data/": on the data branch the run
# documents sit in a "data" folder beside the site (store/publish.py).
JSON_DIR = "json"
BENCHMARK_DIR = "bench"  # not "benchmarks": the Action's default data folder has that name
STATIC_DIR = "static"
# Versioned name: a browser never pairs a cached older bundle with newer pages.
PLOTLY_FILE = f"{STATIC_DIR}/plotly-basic-4.1.1.min.js"
INDEX_PAGE = "index.html"
TRAINING_PAGE = "training.html"
COMPARE_PAGE = "compare.html"
RUNS_INDEX = f"{JSON_DIR}/runs.json"
BENCHMARKS_INDEX = f"{JSON_DIR}/benchmarks.json"
TRAINING_DATA = f"{JSON_DIR}/training.json"
CHANGE_POINT_MEMO = f"{BUILD_CACHE_DIR}/changepoints.json"
CHUNK_MEMO = f"{BUILD_CACHE_DIR}/chunks.json"  # digests and lengths of history chunks


def suite_page(suite: str) -> str:
    return f"suites/{safe_key(suite, suite)}.html"


def benchmark_page(series: Series) -> str:
    return f"{BENCHMARK_DIR}/{series.key}.html"


def series_data(series: Series) -> str:
    return f"{JSON_DIR}/series/{series.key}.json"


def series_pack(bucket: int, chunk: int) -> str:
    """The packed file holding history chunk `chunk` of every series in pack bucket `bucket`
    (data.py: binary columns, one segment per series, read by byte range)."""
    return f"{JSON_DIR}/packs/{bucket}/{chunk}.bin"


def run_table(chunk: int) -> str:
    """What the pages show of runs [chunk x RUN_CHUNK, (chunk + 1) x RUN_CHUNK)."""
    return f"{JSON_DIR}/runs/table-{chunk}.json"


def run_values_pack(chunk: int) -> str:
    """The values of the same runs, one part each (packs.encode_run_values), read by byte
    range."""
    return f"{JSON_DIR}/runs/values-{chunk}.bin"


def trend_data(series: Series) -> str:
    return f"{JSON_DIR}/trend/{series.key}.json"


# Top-level names a build writes; anything else found in the output folder is not the site's.
SITE_NAMES = frozenset({"index.html", "training.html", "compare.html", "suites", BENCHMARK_DIR,
                        JSON_DIR, STATIC_DIR, ".nojekyll", ".torch-bench-site",
                        BUILD_CACHE_DIR})


def root_of(page: str) -> str:
    """The relative prefix from a page back to the site's root."""
    return "../" * page.count("/")
