"""The site's size against the limit of GitHub Pages (a small limit stands in for its 1 GB):
over it, the build fails in one line naming the size and what to prune, writes nothing and
publishes nothing; near it, the build warns. Secrets never reach the site's files."""

from __future__ import annotations

import subprocess

from site_history import write_history
from test_store_publish import bare, files_at
from torch_bench.render.size_guard import folder_size
from torch_bench.store.remote import Target, store_runs


def error_lines(done) -> list[str]:
    return [line for line in done.stderr.splitlines() if "error:" in line]


def test_a_site_over_the_limit_is_refused_and_the_previous_one_left_as_it_was(tmp_path, cli):
    write_history(tmp_path / "data")
    cli("site", "--data", "data", "--out", "site", check=True)
    before = {p: p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()}
    size, files = folder_size(tmp_path / "site")
    assert size > 50_000
    refused = cli("site", "--data", "data", "--out", "site", "--size-limit", "0.05")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    [line] = error_lines(refused)
    assert f"{size / 1e6:,.0f} MB in {files:,} files" in line and "over the 0 MB" in line
    assert "torch-bench data prune --keep N" in line
    assert {p: p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]  # no staging left


def test_a_first_build_over_the_limit_writes_nothing(tmp_path, cli):
    write_history(tmp_path / "data")
    refused = cli("site", "--data", "data", "--out", "site", "--size-limit", "0.05")
    assert refused.returncode == 2 and len(error_lines(refused)) == 1
    assert not (tmp_path / "site").exists()


def test_a_site_near_the_limit_is_written_with_a_warning(tmp_path, cli):
    write_history(tmp_path / "data")
    cli("site", "--data", "data", "--out", "first", check=True)
    size, _ = folder_size(tmp_path / "first")
    near = cli("site", "--data", "data", "--out", "site", "--size-limit", f"{size / 0.8 / 1e6}",
               check=True)
    warnings = [line for line in near.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "80% of the" in warnings[0] and "data prune" in warnings[0]
    assert (tmp_path / "site" / "index.html").is_file()
    quiet = cli("site", "--data", "data", "--out", "other", check=True)
    assert "warning:" not in quiet.stderr


def test_a_site_over_the_limit_is_not_published(tmp_path, cli):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "data")
    store_runs(write_history(tmp_path / "history"), target)
    tip = subprocess.run(["git", "-C", str(remote), "rev-parse", "gh-pages"],
                         capture_output=True, text=True, check=True).stdout
    refused = cli("site", "--publish", "--remote", str(remote), "--out", "built",
                  "--size-limit", "0.05")
    assert refused.returncode == 2 and len(error_lines(refused)) == 1
    assert "over the" in refused.stderr
    assert subprocess.run(["git", "-C", str(remote), "rev-parse", "gh-pages"],
                          capture_output=True, text=True, check=True).stdout == tip
    assert not any(name.endswith("index.html") for name in files_at(remote))


def test_a_secret_in_a_commit_message_is_masked_in_every_file_of_the_site(tmp_path, cli):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write_history(tmp_path / "data")
    for path in (tmp_path / "data").rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace('"message": "', f'"message": "leak {token} '),
                        encoding="utf-8")
    cli("site", "--data", "data", "--out", "site", check=True)
    texts = [p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert not any(token.encode() in text for text in texts)
    assert any(b"leak " in text for text in texts)
