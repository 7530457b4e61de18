"""Secrets as a type: an index URL given with credentials is held as a ``Secret`` whose every text
form is redacted; only ``reveal()`` gives the raw value (uv's command line, the environment's
identity, the scrubber). Through the command line, with no network: the index is unreachable and
the check fails fast, and the credentials appear in no report, no terminal line, no exception."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import traceback
from dataclasses import asdict
from pathlib import Path

from jaxcompat._util.redact import Secret
from jaxcompat.env.sources import index_identity
from jaxcompat.model.index import IndexOptions, index_options
from tests.helpers import make_tree

REPO = Path(__file__).resolve().parents[1]
SECRET = "s3cr3t-t0ken"
URL = f"https://__token__:{SECRET}@127.0.0.1:9/simple"


def test_every_text_form_of_a_secret_is_redacted_and_reveal_gives_it():
    s = Secret(URL)
    shown = "https://****@127.0.0.1:9/simple"
    assert str(s) == repr(s)[1:-1] == f"{s}" == format(s, "") == "%s" % s == shown
    assert json.dumps({"url": s, "urls": [s]}) == json.dumps({"url": shown, "urls": [shown]})
    assert SECRET not in ", ".join([s, s]) + s + "/jax/" and SECRET not in s.upper()
    e = ValueError(f"cannot read {s}", s)
    assert SECRET not in str(e) + repr(e) + "".join(traceback.format_exception_only(type(e), e))
    assert s.reveal() == URL and s == URL and s == Secret(URL) and s != shown and hash(s) == hash(URL)
    for other in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), Secret(s)):
        assert type(other) is Secret and other.reveal() == URL and str(other) == shown
    assert not Secret("") and Secret("https://pypi.org/simple") == "https://pypi.org/simple"


def test_the_index_options_hold_secrets_however_they_are_made():
    made = (index_options(URL, [URL], [URL]), IndexOptions(URL, (URL,), (URL,)))
    for opts in made:
        assert all(isinstance(u, Secret) for u in (opts.index_url, *opts.extra_index_urls, *opts.find_links))
        shown = repr(opts) + str(opts) + json.dumps(asdict(opts)) + json.dumps(opts.to_dict()) + opts.describe()
        assert SECRET not in shown and "127.0.0.1:9" in shown
        assert opts.uv_args(resolving=True).count(URL) == 3  # uv gets the real URLs: reveal() alone
        assert SECRET not in json.dumps(index_identity(opts))  # the lock's header holds its digest: a new token
        other = URL.replace(SECRET, "an0ther-t0ken")
        assert index_identity(opts) != index_identity(IndexOptions(other, (URL,), (URL,)))  # is a new environment
    assert made[0] == made[1] and hash(made[0]) == hash(made[1])


def test_a_secret_index_url_on_the_command_line_is_in_no_output(tmp_path):
    """``check --index-url https://user:token@host/simple``: the index cannot be reached (every
    connection goes to a closed local port), the check says it could not judge (exit 2), and
    neither the token nor its user name is in what it printed or wrote."""
    make_tree(tmp_path)
    closed = "http://127.0.0.1:9"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({"PYTHONPATH": str(REPO), "UV_HTTP_RETRIES": "0", "NO_PROXY": "", "no_proxy": "",
                **{k: closed for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}})
    quick = "import sys, time; time.sleep = lambda s: None; from jaxcompat.commands import main; sys.exit(main())"
    proc = subprocess.run(
        [sys.executable, "-c", quick, "check", "--matrix", str(tmp_path / "matrix.toml"),
         "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
         "--index-url", URL, "--extra-index-url", f"https://{SECRET}@127.0.0.1:9/extra", "jax==0.4.33"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    said = proc.stdout + proc.stderr
    written = "".join(p.read_text(encoding="utf-8", errors="replace")
                      for p in sorted((tmp_path / "reports").rglob("*")) if p.is_file())
    assert proc.returncode == 2, said
    assert "https://****@127.0.0.1:9/simple" in said and "127.0.0.1:9" in written  # the index is named...
    for text in (said, written):
        assert SECRET not in text and "__token__" not in text  # ...never its credentials


def test_a_password_holding_an_at_sign_is_redacted_whole():
    """``user:p@ss@host``: the userinfo runs to the last ``@`` (red team 5: the tail ``ss`` showed)."""
    from jaxcompat._util.redact import redact_text, redact_url

    assert redact_text("failed: https://user:p@ss@host/simple and mail a@b.c") == \
        "failed: https://****@host/simple and mail a@b.c"
    assert redact_url("https://user:p@ss@host/simple") == "https://****@host/simple"


def test_a_commit_hash_and_an_ordinary_query_stay_readable_a_token_does_not():
    """Red team 7 (R4): a candidate's URL holding its commit's hash and ``?ref=main`` was blanked, and
    so was every later text naming that commit or branch ("broke at jax commit **** on branch ****")."""
    from jaxcompat._util.redact import redact_url, url_tokens

    sha = "0123456789abcdef0123456789abcdef01234567"
    url = f"https://storage.example.org/jax-nightly/{sha}/jax-0.4.36-py3-none-any.whl?ref=main"
    assert redact_url(url) == url and url_tokens(url) == []
    assert redact_url("https://x.org/jax/abc1234/simple/") == "https://x.org/jax/abc1234/simple/"
    token = "AbCdEfGh1234567890XyZq"
    assert redact_url(f"https://dl.cloudsmith.io/{token}/org/repo/python/simple/").count(token) == 0
    assert redact_url("https://x.org/simple/?token=abc&ref=main") == "https://x.org/simple/?token=****&ref=main"
    assert url_tokens(f"https://x.org/f?x={token}") == [token]


def test_every_variable_a_test_may_read_is_in_the_key_and_none_in_clear_but_the_ecosystems():
    """Red team 7 (R6): ``SCIPY_ARRAY_API`` (not on the ecosystem's list) changed what a test did, and
    a baseline side kept under the other value was re-used: a break read as fails-both, exit 0."""
    from jaxcompat._util.runenv import configuring

    assert configuring({"SCIPY_ARRAY_API": "1"}) != configuring({})
    assert configuring({"SCIPY_ARRAY_API": "1"})["SCIPY_ARRAY_API"].startswith("sha256:")  # never in clear
    assert configuring({"JAX_ENABLE_X64": "1"}) == {"JAX_ENABLE_X64": "1"}
    volatile = {"GITHUB_RUN_ID": "1", "RUNNER_TEMP": "/t", "HOME": "/root", "PWD": "/x", "TERM": "xterm",
                "JAXCOMPAT_STATE": "/s", "PYTEST_CURRENT_TEST": "t"}
    assert configuring(volatile) == {}
