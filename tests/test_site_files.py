"""Which files a dashboard publish may change, and what it can carry from the tip (pure
planning, no git)."""

import json

import pytest

from torch_bench.errors import UserError
from torch_bench.render.paths import RENDER_KEYS
from torch_bench.store.previous_site import (
    PreviousSite,
    decode_previous_site,
    encode_previous_site,
)
from torch_bench.store.site_files import (
    ForeignFiles,
    decode_manifest,
    encode_manifest,
    is_published,
    normalise_site_folder,
    plan_site_change,
    tip_site,
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
    assert decode_manifest(encode_manifest({"b.html": 1, "a.html": 2})) == {"a.html", "b.html"}
    assert decode_manifest(b"\xff not json") == set()
    assert decode_manifest(b'{"files": "index.html"}') == set()


KEYS = b'{"bench/x.html": "k1"}'


def test_the_site_at_a_tip_is_what_its_manifest_lists_and_the_tip_has():
    manifest = encode_manifest({"bench/x.html": 5, "gone.html": 3, RENDER_KEYS: 20})
    tip = {"site/bench/x.html": A, "site/mine.html": B, f"site/{RENDER_KEYS}": B,
           "site/gone-elsewhere.html": A}
    found = tip_site(tip, "site", manifest, KEYS)
    assert found.entries == {"bench/x.html": A, RENDER_KEYS: B}  # not another's file
    assert found.as_previous.keys == {"bench/x.html": "k1"}
    assert found.as_previous.files == {"bench/x.html": 5, RENDER_KEYS: 20}


@pytest.mark.parametrize("manifest, keys", [
    (None, KEYS),  # no dashboard of ours there
    (b'{"files": ["bench/x.html", ".torch-bench-cache/render-keys.json"]}', KEYS),  # version 1
    (encode_manifest({"bench/x.html": 5, RENDER_KEYS: 2}), None),  # no keys file
    (encode_manifest({"bench/x.html": 5, RENDER_KEYS: 2}), b"[1, 2]"),  # not an object
    (encode_manifest({"bench/x.html": 5, RENDER_KEYS: 2}), b"\xff{"),  # not JSON
    (encode_manifest({"bench/x.html": 5}), KEYS),  # a keys file the dashboard did not write
])
def test_nothing_is_carried_from_a_tip_whose_keys_or_sizes_cannot_be_read(manifest, keys):
    tip = {"bench/x.html": A, RENDER_KEYS: B}
    assert tip_site(tip, ".", manifest, keys) is None


def test_of_the_build_cache_only_the_render_keys_are_published():
    assert is_published("index.html") and is_published(RENDER_KEYS)
    assert not is_published(".torch-bench-cache/history.parquet")
    assert not is_published(".torch-bench-cache/changepoints.json")


def test_the_previous_site_file_round_trips_and_anything_else_reads_as_none():
    site = PreviousSite({"bench/x.html": "k1"}, {"bench/x.html": 5})
    assert decode_previous_site(encode_previous_site(site)) == site
    assert decode_previous_site(b"[]") is None and decode_previous_site(b"\xff") is None
    other = json.loads(encode_previous_site(site))
    other["schema"]["version"] = 2
    assert decode_previous_site(json.dumps(other).encode()) is None
    other["schema"]["version"], other["files"]["bench/x.html"] = 1, -1
    assert decode_previous_site(json.dumps(other).encode()) is None
