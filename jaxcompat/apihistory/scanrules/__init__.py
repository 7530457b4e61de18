"""scan's rules, one module each (as ruff keeps a rule): its code, name, level and documentation
(what SARIF and docs/scan.md show), the check and, where there is one, the fix. The walk of a
file (:mod:`jaxcompat.apihistory.scan`) finds the jax names in use and asks the rules.

- ``jxc001``: a name removed at the target (and the plain-rename fix JXC002 shares);
- ``jxc002``: a name deprecated at the target;
- ``jxc003``: a call the target's signature rejects (with its keyword fixes);
- ``jxc004``: private jax API;
- ``jxc005``: a function whose behaviour changed;
- ``jxc006``: a call the target accepts through a deprecation shim (``name=`` fix);
- ``jxc007``: private jax API the target no longer has;
- ``jxc008``: an error-level import only under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

from jaxcompat.apihistory.scanrules import jxc001, jxc002, jxc003, jxc004, jxc005, jxc006, jxc007, jxc008
from jaxcompat.apihistory.scanrules.rule import Rule

RULES: dict[str, Rule] = {m.RULE.code: m.RULE for m in (jxc001, jxc002, jxc003, jxc004, jxc005, jxc006, jxc007,
                                                        jxc008)}
ERROR_CODES = frozenset(code for code, rule in RULES.items() if rule.is_error)
CALL_CODE, CALL_DEPRECATED_CODE = jxc003.RULE.code, jxc006.RULE.code

