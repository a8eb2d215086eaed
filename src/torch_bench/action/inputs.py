"""The Action's inputs, read once from the `TB_*` variables action.yml sets, validated, frozen.

Errors name the input as the workflow author wrote it: `Invalid value for 'comment' input`.
`suites` and `device` default to empty in action.yml, so that an input the workflow did not set
can be told from one it did: the input wins, then the `config` file's value, then the fallback
(`rnns`, `cuda`).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from torch_bench.action.install import parse_torch
from torch_bench.boundary import limited
from torch_bench.errors import UserError
from torch_bench.store.layout import DATA_FOLDER
from torch_bench.suite_path import parse_suite_path
from torch_bench.yamlfile import read_yaml

RESULT_FORMATS = ("canonical", "oss", "aipep", "pytest-benchmark", "asv",
                  "github-action-benchmark")


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return text

    return parse


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError("expected true or false")
    return lowered == "true"


def _tristate(text: str) -> str:
    return _choice("auto", "true", "false")(text.lower())


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("expected a whole number >= 0")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError("expected a number > 0")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise ValueError("expected a fraction such as 0.02")
    return value


def _limited(name: str) -> Callable[[str], float | int]:
    """The rate or budget `name` within the bounds the CLI's flags have (boundary.LIMITS)."""
    parse = limited(name)

    def checked(text: str) -> float:
        try:
            return parse(text)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(str(exc)) from None

    return checked


def _device(text: str) -> str:
    if not text:
        return text  # not set: the config file's, else the fallback
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise ValueError("expected cpu, cuda or cuda:N")
    return text


def _repository(text: str) -> str:
    if text and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", text):
        raise ValueError("expected owner/name")
    return text


def _branch(text: str) -> str:
    if not text or text.startswith("-") or ".." in text or re.search(r"[\s~^:?*\[\\]", text):
        raise ValueError("not a valid branch name")
    return text


def _optional_branch(text: str) -> str:
    return _branch(text) if text else text  # empty: not used


def _folder(text: str) -> str:
    parts = text.strip("/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError("expected a relative folder without '..'")
    return "/".join(parts)


def _site_folder(text: str) -> str:
    parts = [p for p in text.strip("/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError("expected '.' (the branch root) or a relative folder without '..'")
    return "/".join(parts) or "."


def _sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", text):
        raise ValueError("expected the 40-character hash of the PR's head commit")
    return text


def _baseline(text: str) -> str:
    if text not in ("auto", "latest") and not text.endswith(".json"):
        raise ValueError("expected auto, latest, or the path of a results file (.json)")
    return text


def _text(text: str) -> str:
    return text


def _pr_budget(text: str) -> float | None:
    """`auto` (None: as long as measuring the head took) or seconds >= 0."""
    if text.strip().lower() == "auto":
        return None
    return _limited("budget")(text)


@dataclass(frozen=True)
class Input:
    name: str  # as in action.yml
    parse: Callable[[str], Any]
    default: str

    @property
    def variable(self) -> str:
        return "TB_" + self.name.upper().replace("-", "_")


INPUTS: tuple[Input, ...] = (
    Input("suites", _text, ""),
    Input("config", _text, ""),
    Input("run-args", _text, ""),
    Input("device", _device, ""),
    Input("torch", parse_torch, "auto"),
    Input("total-partitions", lambda t: max(1, int(t)), "1"),
    Input("partition-id", _non_negative_int, "0"),
    Input("results-file", _text, ""),
    Input("results-format", _choice(*RESULT_FORMATS), "canonical"),
    Input("results-unit", _text, ""),
    Input("data-branch", _branch, "gh-pages"),
    Input("data-folder", _folder, DATA_FOLDER),
    Input("data-repository", _repository, ""),
    Input("data-remote", _text, ""),
    Input("push", _tristate, "auto"),
    Input("build-site", _tristate, "auto"),
    Input("site-folder", _site_folder, "."),
    Input("site-branch", _optional_branch, ""),
    Input("comment", _choice("always", "on-regression", "never"), "always"),
    Input("min-effect", _fraction, "0.02"),
    Input("false-alarm-rate", _limited("false-alarm-rate"), "0.01"),
    Input("per-pr-level", _limited("per-pr-level"), "0.05"),
    Input("confirm-budget", _limited("budget"), "600"),
    Input("fail-on-regression", _bool, "false"),
    Input("baseline", _baseline, "auto"),
    Input("ab", _choice("auto", "always", "never"), "auto"),
    Input("keep-runs", _non_negative_int, "0"),
    Input("compact-after", _non_negative_int, "0"),
    Input("output-dir", _text, "torch-bench-output"),
    Input("bisect", _bool, "false"),
    Input("bisect-max-steps", _limited("max-steps"), "6"),
    Input("explain", _choice("auto", "never"), "auto"),
    Input("explain-budget", _limited("budget"), "600"),
    Input("suite-path", parse_suite_path, ""),
    Input("pr-budget", _pr_budget, "auto"),
)


# Inputs a `config` file may set too: used when the workflow leaves the input empty.
FROM_CONFIG = {"suites": "rnns", "device": "cuda"}  # name -> fallback when neither sets it


def _with_config(values: dict[str, Any]) -> None:
    """Fill `suites` and `device` the workflow left empty from the config file, else the
    fallback."""
    unset = [name for name in FROM_CONFIG if not values[name]]
    config = read_yaml(values["config"]) if unset and values["config"] else None
    config = config if isinstance(config, dict) else {}
    for name in unset:
        found = config.get(name)
        if isinstance(found, (list, tuple)):
            found = ",".join(str(v) for v in found)
        values[name] = str(found).strip() if found else FROM_CONFIG[name]
    try:
        _device(values["device"])
    except ValueError as exc:
        raise UserError(f"{values['config']}: device: {values['device']!r} ({exc})") from None


# The sub-actions: `dashboard/action.yml` (build the dashboard once, after a matrix) and
# `comment/action.yml` (post a fork PR's report from a `workflow_run` workflow).
SITE_INPUTS: tuple[Input, ...] = tuple(
    spec for spec in INPUTS
    if spec.name in ("data-branch", "data-folder", "data-repository", "data-remote",
                     "site-folder", "site-branch", "output-dir"))

COMMENT_INPUTS: tuple[Input, ...] = (
    Input("report-dir", _text, "pr-report"),
    Input("head-sha", _sha, ""),
    Input("config-name", _text, "default"),
)


# `bisect/action.yml`: bisect a range of commits given by hand (a workflow_dispatch workflow).
BISECT_INPUTS: tuple[Input, ...] = (
    *(spec for spec in INPUTS if spec.name in ("suites", "config", "run-args", "device",
                                               "torch", "output-dir")),
    Input("good", _text, ""),
    Input("bad", _text, ""),
    Input("max-steps", _limited("max-steps"), "6"),
)


@dataclass(frozen=True)
class ActionInputs:
    values: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


def _check_site_branch(values: Mapping[str, Any]) -> None:
    """A site branch is replaced on every publish: it cannot be the data branch."""
    if values["site-branch"] and values["site-branch"] == values["data-branch"]:
        raise UserError(
            f"Invalid value for 'site-branch' input: {values['site-branch']!r} is the "
            f"'data-branch' input too; each publish replaces the site branch by one commit "
            f"holding only the dashboard, which would delete the data. Keep the data on a "
            f"branch of its own (e.g. data-branch: benchmark-data), or leave site-branch "
            f"empty to publish the dashboard on the data branch")


def read_inputs(environ: Mapping[str, str],
                table: tuple[Input, ...] = INPUTS) -> ActionInputs:
    values = {}
    for spec in table:
        raw = environ.get(spec.variable, "").strip() or spec.default
        try:
            values[spec.name] = spec.parse(raw)
        except ValueError as exc:
            raise UserError(f"Invalid value for '{spec.name}' input: {raw!r} ({exc})") from None
    if table is INPUTS:
        _with_config(values)
    if "site-branch" in values:
        _check_site_branch(values)
    if table is INPUTS and values["partition-id"] >= values["total-partitions"]:
        raise UserError(f"Invalid value for 'partition-id' input: {values['partition-id']} "
                        f"(must be below total-partitions, {values['total-partitions']})")
    return ActionInputs(values)
