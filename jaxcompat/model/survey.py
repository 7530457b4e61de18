"""The survey's records: a ``Combo`` (one jax x equinox combination off the matrix) and the
``Space`` (every pair the releases' metadata accepts). Built by operations/survey.py, judged as
``knowledge/survey.Observation``, rendered by report/survey.py and report/survey_html.py."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Combo:
    jax: str
    equinox: str

    @property
    def id(self) -> str:
        return f"survey-jax{self.jax}-eqx{self.equinox}"


@dataclass
class Space:
    jax: list[str]
    equinox: list[str]
    pairs: set[tuple[str, str]]  # (jax, equinox) that equinox's metadata accepts
    dates: dict[str, dict[str, str]] = field(default_factory=dict)

    def equinox_for(self, jax: str) -> list[str]:
        return [e for e in self.equinox if (jax, e) in self.pairs]

    def jax_for(self, eqx: str) -> list[str]:
        return [j for j in self.jax if (j, eqx) in self.pairs]
