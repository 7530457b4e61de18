"""The warnings before the break come from the same history as scan (offline, no jax).

jax's own messages often announce no removal ("jax.core.get_aval is deprecated; use jax.typeof
instead."); the timeline read from the wheels knows it went in 0.10.0. `check`, `latest` and the
survey say that release, not "no removal version announced" (issue 33)."""

from __future__ import annotations

from jaxcompat.apihistory.apiexplain import histories, history
from jaxcompat.apihistory.apitimeline import DEPRECATED, Timeline
from jaxcompat.apihistory.scanlookup import resolve
from jaxcompat.knowledge.config import load
from jaxcompat.knowledge.deprecations import forecast
from jaxcompat.model.deprecations import Deprecation, History
from jaxcompat.model.outcomes import CellResult
from jaxcompat.report.candidate import candidate_verdict
from jaxcompat.report.latest import warnings_section
from tests.helpers import make_tree

# what the plugin recorded while equinox 0.13.2 imported under jax 0.9.1 (jax's own message)
GET_AVAL = {"package": "equinox", "where": "equinox/internal/_loop/common.py:8", "category": "DeprecationWarning",
            "message": "jax.core.get_aval is deprecated; use jax.typeof instead.", "case": None}


def _timeline_says(api: str) -> tuple[str, str]:
    mod, _, name = api.rpartition(".")
    st = Timeline.load().name(mod, name, Timeline.load().newest)
    return st.deprecated_in, st.removed_in


def _replacement(api: str) -> str:
    mod, _, name = api.rpartition(".")
    return Timeline.load().name(mod, name, Timeline.load().newest).replacement


def test_the_removal_release_comes_from_the_timeline_when_the_message_announces_none():
    dep = Deprecation.from_dict(GET_AVAL)
    assert dep.removal is None  # the message itself says nothing of a removal
    deprecated_in, removed_in = _timeline_says("jax.core.get_aval")
    assert removed_in, "the committed timeline knows jax.core.get_aval went"
    assert history("jax.core.get_aval") == History(deprecated_in, removed_in, Timeline.load().newest,
                                                   _replacement("jax.core.get_aval"))
    (line,) = forecast([GET_AVAL], {"equinox": "0.13.2"}, histories([GET_AVAL]))
    assert line == (f"equinox 0.13.2 uses jax.core.get_aval (equinox/internal/_loop/common.py:8), "
                    f"which jax removes in {removed_in} (deprecated in {deprecated_in})")
    assert dep.removed_in(history("jax.core.get_aval")) == removed_in


def test_check_verdict_says_the_release_that_removes_it(tmp_path):
    matrix = load(make_tree(tmp_path))
    result = CellResult(id="c", python="3.11", backend="cpu", status="ok",
                        versions={"jax": "0.9.1", "equinox": "0.13.2"}, deprecations=[GET_AVAL])
    text, _ = candidate_verdict(result, matrix)
    _, removed_in = _timeline_says("jax.core.get_aval")
    assert f"equinox 0.13.2 uses jax.core.get_aval (equinox/internal/_loop/common.py:8), which jax removes in " \
           f"{removed_in}" in text
    assert "no removal version announced" not in text
    # latest's report and issue body say the same
    assert any(f"which jax removes in {removed_in}" in line for line in warnings_section(result))


def test_a_name_still_deprecated_at_the_newest_release_says_so():
    t = Timeline.load()
    hits = (resolve(t, f"{m}.{n}", t.newest) for m, names in sorted(t.names.items()) for n in sorted(names))
    hit = next(h for h in hits if h is not None and h.state.state == DEPRECATED)
    rec = {**GET_AVAL, "message": f"{hit.name} is deprecated."}
    (line,) = forecast([rec], {"equinox": "0.13.2"}, histories([rec]))
    assert f"still there in jax {t.newest}, the newest release; no removal announced" in line


def test_without_the_history_the_message_own_announcement_is_used():
    rec = {**GET_AVAL, "message": "jax.core.get_aval is deprecated. It will be removed in JAX v0.10.0."}
    assert forecast([rec], {"equinox": "0.13.2"}) == [
        "equinox 0.13.2 uses jax.core.get_aval (equinox/internal/_loop/common.py:8), which jax removes in 0.10.0"]
    # a name the history does not know (not jax's, or never deprecated) gets no history
    assert histories([{**GET_AVAL, "message": "jaxtyping.foo is deprecated"}]) == {}


# what jax 0.4.32 raised in equinox 0.11.4's checkpointed loop (reports/crater/seed-jax-0.4.32): a
# behaviour is deprecated; jax.tree.map is only the advice inside the message
FLATTEN_UP_TO = ("In a future release of JAX, flatten-up-to will no longer consider None to be a tree-prefix of "
                 "non-None values, got: False.\n\nTo preserve the current behavior, you can usually write:\n"
                 "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, is_leaf=lambda x: x is None)")


def test_a_behaviour_deprecation_is_said_in_the_warnings_own_words_not_as_the_name_its_advice_mentions():
    from jaxcompat.knowledge import warnings as kw
    from jaxcompat.model.warnings import TestWarning

    rec = {**GET_AVAL, "where": "equinox/internal/_loop/checkpointed.py:1262", "message": FLATTEN_UP_TO}
    dep = Deprecation.from_dict(rec)
    assert dep.api == "" and histories([rec]) == {}
    (line,) = forecast([rec], {"equinox": "0.11.4"}, histories([rec]))
    assert "jax.tree.map" not in line, line
    assert line == ('equinox 0.11.4 runs into a behaviour jax deprecates '
                    '(equinox/internal/_loop/checkpointed.py:1262): "In a future release of JAX, flatten-up-to will '
                    'no longer consider None to be a tree-prefix of '
                    'non-None values, got: False." (no version announced for the change)')
    # a test's new warning of it (check --tests, the crater): the same words, no name
    tracer = ("unhashable type: <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>. Attempting to "
              "hash a tracer will lead to an error in a future JAX release.")
    groups = kw.group({"diffrax": {"t::a": [TestWarning("DeprecationWarning", FLATTEN_UP_TO),
                                            TestWarning("FutureWarning", tracer)]}})
    assert [g.api for g in groups] == ["", ""]
    said = [kw.sentence(g) for g in groups]
    assert said[0].startswith("In a future release of JAX, flatten-up-to will no longer consider None"), said
    assert said[1].startswith("unhashable type: <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>")
    # a name the message says is deprecated is still that name, whatever its advice names
    for message, name in (("jax.tree_map is deprecated: use jax.tree.map", "jax.tree_map"),
                          ("DeprecationWarning: jax.interpreters.batching.NotMapped is deprecated.",
                           "jax.interpreters.batching.NotMapped"),
                          ("Accessing jax.config via the jax.config submodule is deprecated.", "jax.config"),
                          ("jax.random.rbg_key(seed) is deprecated. Use jax.random.PRNGKey(seed, 'rbg')",
                           "jax.random.rbg_key"),
                          ("pl.atomic_add is deprecated, access it through jax.experimental.pallas.triton.", "")):
        assert Deprecation.from_dict({"message": message}).api == name, message
