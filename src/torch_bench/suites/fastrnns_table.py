"""fastrnns' own table of a run (`--sep`): per group, a header line and one line per variant
with `name avg_fwd std_fwd info_fwd avg_bwd std_bwd info_bwd`, every cell right-aligned in
16 characters (cut at 16), numbers as `%.4g`, the raw times shown as `None`, as fastrnns'
`bench.py` prints them. The mean and the sample standard deviation (n - 1, as `torch.std`)
are over every sample. Times are in milliseconds on every device (fastrnns' CPU timings,
labelled ms, are seconds).
"""

from __future__ import annotations

from collections.abc import Sequence

from torch_bench.results.schema import Result

FIELDS = ("name", "avg_fwd", "std_fwd", "info_fwd", "avg_bwd", "std_bwd", "info_bwd")
COLUMN_WIDTH = 16
# fastrnns' group -> the words it prints before the group's table
GROUP_TITLES = {"lstm": "LSTM", "vl_lstm": "variable-length sequence LSTM", "resnet": "ResNet"}


def fit(text: str, width: int = COLUMN_WIDTH) -> str:
    return text.rjust(width) if len(text) < width else text[:width]


def cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def table_line(values: Sequence, sep: str = " ") -> str:
    return sep.join(fit(cell(value)) for value in values)


def fastrnns_table(results: Sequence[Result], sep: str = " ") -> list[str]:
    """The table's lines for the groups among `results` (forward groups and their
    `-backward` partners), in the order the groups first appear."""
    timed = [r for r in results if r.ok and r.group and r.metric.endswith("_time")]
    lines: list[str] = []
    groups = dict.fromkeys(r.group for r in timed if not r.group.endswith("-backward"))
    for group in groups:
        backward = {r.name: r for r in timed if r.group == f"{group}-backward"}
        lines += [f"Benchmarking {GROUP_TITLES.get(group, group)}s...", table_line(FIELDS, sep)]
        for fwd in (r for r in timed if r.group == group):
            bwd = backward.get(fwd.name)
            lines.append(table_line((
                fwd.name, fwd.summary.mean, fwd.summary.std, "None",
                bwd.summary.mean if bwd else "N/A", bwd.summary.std if bwd else "N/A", "None"),
                sep))
        lines.append("")
    if lines:
        lines.append("(avg and std in ms, over every sample)")
    return lines
