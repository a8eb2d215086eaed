"""Analysis of results: baselines, run-to-run noise, the PR-vs-baseline rule, verdicts and
change points in history. Pure functions over samples; git and process calls live in
`git.py` and `ab.py`."""
