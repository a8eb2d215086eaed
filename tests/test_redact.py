"""Secrets kept out of case processes and out of captured text."""

import pytest

from torch_bench.redact import MASK, is_secret_name, scrub_secrets, token_free_environment

RUNNER = {
    "GITHUB_TOKEN": "ghs_runnertoken000000000000000000000",
    "ACTIONS_RUNTIME_TOKEN": "runtime-secret",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-secret",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.example",
    "INPUT_GITHUB-TOKEN": "input-secret",
    "INPUT_DEVICE": "cpu",
    "MY_PAT": "personal-secret",
    "PATH": "/usr/bin",
    "HOME": "/home/runner",
}


def test_the_case_environment_keeps_everything_but_secrets():
    assert token_free_environment(RUNNER, extra_names=["MY_PAT"]) == {
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.example",
        "INPUT_DEVICE": "cpu",
        "PATH": "/usr/bin",
        "HOME": "/home/runner",
    }


def test_only_named_variables_are_secret_beyond_the_usual_tokens():
    assert not is_secret_name("MY_PAT") and is_secret_name("MY_PAT", ["MY_PAT"])
    assert not is_secret_name("INPUT_PATH") and is_secret_name("INPUT_API-KEY")
    assert is_secret_name("GH_TOKEN") and not is_secret_name("GITHUB_SHA")


def test_secret_values_and_token_shapes_are_masked():
    text = ("auth failed with runtime-secret for input-secret and personal-secret; "
            "found ghp_0123456789abcdefghijABCDEFGHIJ0123 and "
            "github_pat_11AAAA_bbbbbbbbbbbbbbbbbbbbbb "
            "on cpu in /usr/bin")
    scrubbed = scrub_secrets(text, RUNNER, extra_names=["MY_PAT"])
    assert scrubbed == "auth failed with *** for *** and ***; found *** and *** on cpu in /usr/bin"


def test_without_secrets_text_is_unchanged():
    text = "ValueError: shape [2, 3] ghp_short"
    assert scrub_secrets(text, {"GITHUB_TOKEN": ""}) == text


def test_the_exit_scrubber_knows_registered_values_and_the_streams_pass_through_it(capsys):
    import sys

    from torch_bench.redact import register_secret, scrub, scrubbed_standard_streams

    register_secret("a-token-read-from-a-flag-named-variable")
    assert scrub("x a-token-read-from-a-flag-named-variable y") == "x *** y"
    with scrubbed_standard_streams():
        print("got a-token-read-from-a-flag-named-variable and ghp_" + "Z" * 36)
        print("on stderr a-token-read-from-a-flag-named-variable", file=sys.stderr)
    captured = capsys.readouterr()
    assert captured.out == "got *** and ***\n" and captured.err == "on stderr ***\n"


def test_markdown_escaping_masks_before_it_escapes():
    from torch_bench.report.escape import markdown_text

    escaped = markdown_text("bench ghp_" + "Y" * 36)
    assert "Y" * 36 not in escaped and "***" not in escaped or "&#42;&#42;&#42;" in escaped


def test_a_secret_set_after_an_earlier_scrub_is_masked_too(monkeypatch):
    from torch_bench.redact import scrub

    page = "<p>deployed with a-late-secret-value-1234</p>" * 50
    assert scrub(page) == page  # remembered: this environment has no such secret
    monkeypatch.setenv("GH_TOKEN", "a-late-secret-value-1234")
    assert "a-late-secret-value-1234" not in scrub(page)
    monkeypatch.delenv("GH_TOKEN")
    assert scrub(page) == page
    assert scrub(page + "ghr_" + "x" * 30) == page + "***"


@pytest.mark.parametrize("prefix", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"])
def test_every_token_shape_is_masked_anywhere_in_a_large_page(prefix):
    token = prefix + "Ab1" * 10
    page = "<p>height 12</p>" * 2500  # "gh" everywhere, no token
    assert scrub_secrets(page, {}) == page
    for text in (token + page, page + token, page + f"<code>{token}</code>" + page):
        masked = scrub_secrets(text, {})
        assert token not in masked and MASK in masked
