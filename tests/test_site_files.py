"""Which files a dashboard publish may change (pure planning, no git)."""

import pytest

from torch_bench.errors import UserError
from torch_bench.store.site_files import (
    ForeignFiles,
    decode_manifest,
    encode_manifest,
    normalise_site_folder,
    plan_site_change,
)

A, B = ("100644", "a" * 40), ("100644", "b" * 40)


def test_only_owned_files_are_replaced_or_removed():
    tip = {"CNAME": A, "index.html": A, "old.html": A, "data/runs/x.json": A}
    change = plan_site_change(tip, {"index.html": B}, ".", "data", {"index.html", "old.html"})
    assert change.writes == {"index.html": B} and change.removals == ("old.html",)


def test_a_file_not_owned_is_never_overwritten_nor_a_folder_replaced_by_a_file():
    with pytest.raises(ForeignFiles, match="index.html"):
        plan_site_change({"index.html": A}, {"index.html": B}, ".", "data", set())
    with pytest.raises(ForeignFiles, match="docs"):
        plan_site_change({"docs/guide.md": A}, {"docs": B}, ".", "data", set())
    with pytest.raises(ForeignFiles, match="notes/page.html"):
        plan_site_change({"notes": A}, {"notes/page.html": B}, ".", "data", set())
    same = plan_site_change({"index.html": A}, {"index.html": A}, ".", "data", set())
    assert same.writes == {"index.html": A}  # identical content overwrites nothing


def test_the_site_stays_out_of_the_data_folder():
    with pytest.raises(UserError, match="inside the data folder"):
        plan_site_change({}, {"index.html": B}, "data/site", "data", set())
    with pytest.raises(UserError, match="inside the data folder"):
        plan_site_change({}, {"data/x.json": B}, ".", "data", set())
    with pytest.raises(UserError, match=r"\.\."):
        normalise_site_folder("../up")
    assert normalise_site_folder("/dashboard/") == "dashboard" and normalise_site_folder("") == "."


def test_manifest_round_trip_and_a_damaged_one_owns_nothing():
    assert decode_manifest(encode_manifest(["b.html", "a.html"])) == {"a.html", "b.html"}
    assert decode_manifest(b"\xff not json") == set()
    assert decode_manifest(b'{"files": "index.html"}') == set()
