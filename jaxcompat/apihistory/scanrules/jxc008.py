"""JXC008 jax-api-removed-typing-only: an error-level finding on an import made only under
``if TYPE_CHECKING:``: a type checker fails on it, the code that runs does not (a warning)."""

from __future__ import annotations

from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC008", "jax-api-removed-typing-only", FindingLevel.WARNING,
            "A jax name removed at the target, imported only under `if TYPE_CHECKING:`: a type checker fails "
            "on it, the code that runs does not.")


def applies(error: bool, is_import: bool, under_type_checking: bool) -> bool:
    """An error of another rule, found in an import statement under ``if TYPE_CHECKING:``."""
    return error and is_import and under_type_checking


def message(text: str) -> str:
    """The other rule's text, said to hold for a type checker only."""
    return text + " (only under TYPE_CHECKING: a type checker fails on it, not the code)"
