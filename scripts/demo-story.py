"""The demo's closing story, from the verdicts it left: what was measured, what was caught,
where everything is. Usage: demo-story.py OUTPUT_FOLDER SECONDS"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def change(verdict: dict) -> str:
    ratio = verdict.get("ratio")
    return f"{(ratio - 1) * 100:+.0f}%" if isinstance(ratio, (int, float)) else "n/a"


def label(verdict: dict) -> str:
    return f"{verdict['suite']}/{verdict['name']} {verdict['metric']}"


def said(verdict: dict) -> str:
    if verdict.get("confirmed") is True:
        return "confirmed by the A/B rounds"
    return verdict.get("note") or verdict["verdict"]


def story(out: Path, seconds: int) -> list[str]:
    report = json.loads((out / "report.json").read_text())
    verdicts = report["verdicts"]
    of = {kind: [v for v in verdicts if v["verdict"] == kind] for kind in
          {v["verdict"] for v in verdicts}}
    confirmation = report.get("confirmation") or {}
    lines = ["", f"The story, in {seconds} s:",
             f"  measured   {len(verdicts)} benchmarks of a tiny project: 5 runs on main (the "
             "history), the PR's head once"]
    if confirmation:
        lines.append(f"             then {confirmation['benchmarks']} of them again, main and "
                     f"the PR interleaved in {confirmation['rounds']} A/B round(s) "
                     f"({confirmation['seconds']:.0f} s): targeted confirmation")
    regressions = of.get("regression", [])
    if regressions:
        lines += [f"  caught     {label(v)} {change(v)} slower: a regression, {said(v)}"
                  for v in regressions]
    else:
        lines.append("  caught     nothing: the planted slowdown was not called a regression "
                     "this time (see the report)")
    lines += [f"  improved   {label(v)} {change(v)}: {said(v)}"
              for v in of.get("improvement", [])]
    unchanged = of.get("unchanged", [])
    if unchanged:
        lines.append("  unchanged  " + ", ".join(
            f"{v['suite']}/{v['name']} (no change beyond ±{v['detectable'] * 100:.0f}%)"
            if v.get("detectable") else f"{v['suite']}/{v['name']}" for v in unchanged))
    for kind in sorted(set(of) - {"regression", "improvement", "unchanged"}):
        lines += [f"  {kind:<10} {label(v)}: {v.get('note') or kind}" for v in of[kind]]
    lines += [
        f"  report     {out / 'report.md'} (the PR comment)",
        f"             {out / 'report.json'} (the verdicts)",
        f"  dashboard  {out / 'site'}; to view it:",
        f"               .venv/bin/python -m http.server --directory {out / 'site'} 8000",
        "             and open http://localhost:8000/: the PR's run is the last point of each "
        "trend, a card marked when it is beyond main's noise",
        f"  project    {out / 'project'} (git log main..deeper-mlp: the PR)",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(story(Path(sys.argv[1]), int(sys.argv[2]))))
