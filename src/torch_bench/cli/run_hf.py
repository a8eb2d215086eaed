"""`torch-bench run`'s outputs for users of Hugging Face's benchmark utilities: its CSV files
straight from the run (`--hf-csv DIR`, its `save_to_csv`), its environment block (`--env-print`)
and a log of what the run printed (`--log-file`, its `log_print` / `log_filename`)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from torch_bench.errors import UserError
from torch_bench.fileio import output_path_problem
from torch_bench.formats.hf_csv_files import SUITE as HF_SUITE
from torch_bench.formats.hf_env import environment_lines
from torch_bench.results.schema import Run


def add_hf_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Hugging Face's outputs")
    group.add_argument("--hf-csv", metavar="DIR",
                       help="also write the transformers suite's results as Hugging Face's "
                            "save_to_csv does: inference_time.csv, train_time.csv (seconds), "
                            "inference_memory.csv, train_memory.csv (MB), env.csv, into DIR")
    group.add_argument("--env-print", action="store_true",
                       help="print the environment as Hugging Face's env_print does, after "
                            "the results")
    group.add_argument("--log-file", metavar="FILE",
                       help="append the tables and reports the run prints to FILE, as Hugging "
                            "Face's log_print with log_filename")
    hidden = argparse.SUPPRESS
    group.add_argument("--env_print", dest="env_print", action="store_true", help=hidden)
    group.add_argument("--log_filename", dest="log_file", help=hidden)
    group.add_argument("--log_print", dest="seed_log_print", action="store_true", help=hidden)


def log_path(args: argparse.Namespace) -> str | None:
    """The log file: the one named, or with Hugging Face's `--log_print` alone its default
    name, `log_<unix time>.csv`."""
    if getattr(args, "log_file", None):
        return args.log_file
    return f"log_{round(time.time())}.csv" if getattr(args, "seed_log_print", False) else None


def check_hf_outputs(args: argparse.Namespace, suites) -> None:
    """Before any measuring: the CSV folder and the log file can be written, and the suite
    that fills the CSV files runs."""
    folder = getattr(args, "hf_csv", None)
    if folder is not None:
        if HF_SUITE not in suites:
            raise UserError(f"--hf-csv: Hugging Face's CSV files hold the {HF_SUITE} suite's "
                            f"results; add --suite {HF_SUITE}")
        if Path(folder).exists() and not Path(folder).is_dir():
            raise UserError(f"--hf-csv: {folder} is a file, not a folder")
    log = log_path(args)
    problem = log and output_path_problem(log)
    if problem:
        raise UserError(f"--log-file: {log}: {problem}")


def print_environment(run: Run, args: argparse.Namespace, console: Console) -> None:
    if getattr(args, "env_print", False):
        console.out("\n".join(environment_lines(run)), highlight=False)


def write_hf_outputs(run: Run, args: argparse.Namespace, console: Console,
                     report: Console) -> None:
    """The CSV files, then the log (the text `report`, a recording console, printed)."""
    if getattr(args, "hf_csv", None):
        from torch_bench.cli.export import write_hf_csv

        write_hf_csv(run, args.hf_csv, None, console)
    log = log_path(args)
    if log:
        heading = f"==== torch-bench run {run.run_id} ({run.created_at}) ===="
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(heading + "\n" + report.export_text(clear=False) + "\n")
        console.print(f"appended to {escape(log)}")
