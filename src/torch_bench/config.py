"""The run configuration: parsed and validated once, from a YAML file and CLI flags, into a
frozen object. Every error names the input it is about.

YAML layout (every key optional; CLI flags override it):

    suites: [rnns]
    device: cpu
    filter: "cudnn|py"            # regular expression over "suite/case"
    timing: {warmup: 3, min_repeats: 10, max_repeats: 200, max_time_s: 3.0,
             target_rel_iqr: 0.02}
    isolation: {timeout_s: 900, memory_limit_mb: null}
    preflight: {cpu_busy_limit: 10, cpu_check_s: 1.0}   # % of one core others may use
    processes: 3                  # worker processes each case's samples are spread over
    options:
      rnns: {seq_length: 20, variants: [cudnn, py]}

Selection and sharding are CLI flags (`--exclude REGEX`, `--exclude-exact NAME`,
`--total-partitions N --partition-id I`): see `RunConfig.selects` and `partition_of`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel

from torch_bench.config_file import (
    IsolationSection,
    PreflightSection,
    TimingSection,
    checked_sections,
    validated,
)
from torch_bench.errors import UserError
from torch_bench.execute.isolation import IsolationPolicy
from torch_bench.measure.case import CaseSpec
from torch_bench.measure.preflight import Thresholds
from torch_bench.measure.timer import TimingPolicy
from torch_bench.suites import get_suite
from torch_bench.yamlfile import read_yaml

TOP_LEVEL_KEYS = ("suites", "device", "filter", "threads", "timing", "isolation", "preflight",
                  "processes", "options")
DEVICE_PATTERN = re.compile(r"^(cpu|cuda(:\d+)?)$")
SET_BY_THE_RUNNER = ("loops", "clock", "case_start")  # the last two: `torch-bench run` flags
# Three processes: the fewest whose median is robust to one odd process; each costs a start
# (interpreter, torch import, model build, warmup; about 2 s on CPU, more with a CUDA
# context), while the sampling time is shared among them and does not grow.
DEFAULT_PROCESSES = 3  # timing fields filled from history, not from the user
# With `nloops`, fastrnns' procedure: 10 warm-up steps, all samples in one process.
FASTRNNS_WARMUP, FASTRNNS_PROCESSES = 10, 1


@dataclass(frozen=True)
class RunConfig:
    suites: tuple[str, ...]
    device: str
    options: Mapping[str, Mapping[str, Any]]  # per suite, parsed values
    policy: TimingPolicy
    isolation: IsolationPolicy
    filter: str | None = None
    exclude: tuple[str, ...] = ()  # regular expressions over "suite/case"
    exclude_exact: tuple[str, ...] = ()  # case names or "suite/case", matched exactly
    total_partitions: int = 1
    partition_id: int = 0
    threads: int | None = None
    preflight: Thresholds = Thresholds()
    processes: int = DEFAULT_PROCESSES  # worker processes each case's samples are spread over

    def selects(self, case: CaseSpec) -> bool:
        """--filter / --exclude match case-insensitively (as dynamo's runner does);
        --exclude-exact matches exactly."""
        label = f"{case.suite}/{case.name}"
        if self.filter is not None and re.search(self.filter, label, re.IGNORECASE) is None:
            return False
        if any(re.search(pattern, label, re.IGNORECASE) for pattern in self.exclude):
            return False
        return case.name not in self.exclude_exact and label not in self.exclude_exact

    @property
    def shard(self) -> str | None:
        """`i/n` when the run is one partition of several, else None."""
        return f"{self.partition_id}/{self.total_partitions}" if self.total_partitions > 1 \
            else None

    def describe(self) -> dict[str, Any]:
        return {
            "suites": list(self.suites),
            "device": self.device,
            "filter": self.filter,
            "exclude": list(self.exclude),
            "exclude_exact": list(self.exclude_exact),
            "total_partitions": self.total_partitions,
            "partition_id": self.partition_id,
            "threads": self.threads,
            "processes": self.processes,
            "timing": asdict(self.policy),
            "isolation": asdict(self.isolation),
            "preflight": asdict(self.preflight),
            "options": {s: {k: _plain(v) for k, v in o.items()} for s, o in self.options.items()},
        }


def partition_of(keys: list[str], total: int) -> dict[str, int]:
    """Each key's partition: the distinct keys sorted, the k-th goes to partition k mod
    `total`. All the cases of one model share a partition, every model lands in exactly one,
    and the assignment depends only on the set of names, not on their order or a hash seed."""
    return {key: index % total for index, key in enumerate(sorted(set(keys)))}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def load_yaml_config(path: str) -> dict[str, Any]:
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping at the top level")
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise UserError(f"{path}: {key}: unknown key; known keys: {', '.join(TOP_LEVEL_KEYS)}")
    return checked_sections(data, path)


def _as_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _policy(cls, section: type[BaseModel], values: Mapping[str, Any], where: str):
    try:
        return cls(**validated(section, dict(values), where))
    except ValueError as exc:
        raise UserError(f"{where}: {exc}") from None


def _suite_options(ref: str, given: Mapping[str, Any], where: str) -> dict[str, Any]:
    suite = get_suite(ref)
    declared = {option.name: option for option in suite.options}
    renamed = {alias: o.name for o in suite.options for alias in o.aliases}
    given = {renamed.get(k, k): v for k, v in given.items()}
    unknown = [k for k in given if k not in declared]
    if unknown:
        raise UserError(f"{where}.{unknown[0]}: suite {ref!r} has no such option; "
                        f"options: {', '.join(declared) or '(none)'}")
    values = {}
    for name, option in declared.items():
        if name not in given:
            values[name] = option.default
            continue
        try:
            values[name] = option.parse(_as_text(given[name]))
        except ValueError as exc:
            raise UserError(f"{where}.{name}: {exc}") from None
    return values


def _option_names(ref: str) -> set[str]:
    """The option names a suite accepts, older aliases included."""
    return {name for o in get_suite(ref).options for name in (o.name, *o.aliases)}


def build_run_config(
    *,
    yaml_data: Mapping[str, Any] | None = None,
    yaml_source: str = "config",
    suites: list[str] | None = None,
    device: str | None = None,
    filter: str | None = None,
    timing: Mapping[str, Any] | None = None,
    isolation: Mapping[str, Any] | None = None,
    cli_options: Mapping[str, Any] | None = None,
    exclude: list[str] | None = None,
    exclude_exact: list[str] | None = None,
    total_partitions: int | None = None,
    partition_id: int | None = None,
    threads: int | None = None,
    preflight: Mapping[str, Any] | None = None,
    processes: int | None = None,
) -> RunConfig:
    """Merge YAML and CLI values (CLI wins) and validate them. `cli_options` are suite options
    given as flags; they apply to every selected suite that declares them."""
    data = dict(yaml_data or {})
    suite_refs = tuple(suites or _as_list(data.get("suites"), f"{yaml_source}: suites") or ())
    if not suite_refs:
        raise UserError("no suite selected: pass --suite NAME (see `torch-bench run --help`)")
    # `device: 0` or `--device ''` is a mistake, not a request for the default
    device = device if device is not None else data.get("device")
    device = "cpu" if device is None else device
    if not isinstance(device, str) or not DEVICE_PATTERN.match(device):
        raise UserError(f"--device: {device!r} is not cpu, cuda or cuda:N")
    pattern = filter if filter is not None else data.get("filter")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UserError(f"--filter: {pattern!r} is not a regular expression ({exc})") from None
    for pattern_ in exclude or ():
        try:
            re.compile(pattern_)
        except re.error as exc:
            raise UserError(f"--exclude: {pattern_!r} is not a regular expression ({exc})") \
                from None
    total, part = _partitions(total_partitions, partition_id)
    yaml_options = data.get("options") or {}
    if not isinstance(yaml_options, dict):
        raise UserError(f"{yaml_source}: options: expected a mapping of suite to options")
    options = {}
    cli_options = dict(cli_options or {})
    for ref in suite_refs:
        from_yaml = yaml_options.get(ref) or {}
        if not isinstance(from_yaml, dict):
            raise UserError(f"{yaml_source}: options.{ref}: expected a mapping")
        declared = _option_names(ref)
        merged = {**from_yaml, **{k: v for k, v in cli_options.items() if k in declared}}
        options[ref] = _suite_options(ref, merged, f"{yaml_source}: options.{ref}")
    stray = [k for k in cli_options if not any(k in _option_names(r) for r in suite_refs)]
    if stray:
        flag = "--" + stray[0].replace("_", "-")
        raise UserError(f"{flag}: no selected suite takes this option")
    for ref in yaml_options:
        if ref not in suite_refs:
            get_suite(ref)  # an unknown suite name in the file is still an error
    timing_values = {**(data.get("timing") or {}), **(timing or {})}
    fastrnns = timing_values.get("nloops") is not None
    if fastrnns and timing_values.get("warmup") is None:
        timing_values["warmup"] = FASTRNNS_WARMUP
    if processes is None and data.get("processes") is None and fastrnns:
        processes = FASTRNNS_PROCESSES
    return RunConfig(
        suites=suite_refs,
        device=str(device),
        options=options,
        policy=_policy(TimingPolicy, TimingSection, timing_values, f"{yaml_source}: timing"),
        isolation=_policy(IsolationPolicy, IsolationSection,
                          {**(data.get("isolation") or {}), **(isolation or {})},
                          f"{yaml_source}: isolation"),
        preflight=_policy(Thresholds, PreflightSection,
                          {**(data.get("preflight") or {}), **(preflight or {})},
                          f"{yaml_source}: preflight"),
        filter=pattern,
        exclude=tuple(exclude or ()),
        exclude_exact=tuple(exclude_exact or ()),
        total_partitions=total,
        partition_id=part,
        threads=_threads(threads if threads is not None else data.get("threads"),
                         "--threads" if threads is not None else f"{yaml_source}: threads"),
        processes=_processes(processes if processes is not None else data.get("processes"),
                             "--processes" if processes is not None
                             else f"{yaml_source}: processes"),
    )


def _partitions(total: int | None, part: int | None) -> tuple[int, int]:
    if total is None and part is None:
        return 1, 0
    if total is None or part is None:
        raise UserError("--total-partitions and --partition-id go together")
    if total < 1:
        raise UserError(f"--total-partitions: expected a positive integer, got {total}")
    if not 0 <= part < total:
        raise UserError(f"--partition-id: expected 0 to {total - 1} "
                        f"(partitions are numbered from 0), got {part}")
    return total, part


def _threads(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{where}: expected a whole number of threads >= 1, got {value!r}")
    return value


def _processes(value: Any, where: str) -> int:
    if value is None:
        return DEFAULT_PROCESSES
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{where}: expected a whole number of processes >= 1, got {value!r}")
    return value


def _as_list(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise UserError(f"{where}: expected a list of suite names")
