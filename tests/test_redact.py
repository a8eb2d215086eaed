"""Secrets kept out of case processes and out of captured text."""

from torch_bench.redact import is_secret_name, scrub_secrets, token_free_environment

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
