"""The one JUnit XML writer (cells of the matrix, a user's own tests, the crater).

XML 1.0 cannot hold most control characters (``\\x1b`` of a coloured message, ``\\x00``), and
``ElementTree`` writes them through, making a file CI servers refuse to parse. Every text and
attribute is escaped here, at the boundary, as pytest's ``junitxml`` does (``bin_xml_escape``):
a character XML cannot hold becomes ``#x1B`` — visible, and the file stays valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

from jaxcompat.model.vocab import Kind

# what XML 1.0 allows: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_ILLEGAL = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as ``#xNN``."""
    return _ILLEGAL.sub(lambda m: f"#x{ord(m.group()):02X}", text)


@dataclass
class Case:
    classname: str
    name: str
    kind: Kind = Kind.PASSED
    type: str = ""  # the failure's or error's type attribute
    message: str = ""  # its message attribute (skipped: the reason)
    text: str = ""  # its body
    system_out: str = ""
    time: str = ""


@dataclass
class Suite:
    name: str
    cases: list[Case] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    time: str = ""


def case_of(node_id: str) -> tuple[str, str]:
    """``(classname, name)`` of a pytest node id (``cases/test_x.py::test_y``)."""
    module, _, name = node_id.partition("::")
    return module.replace("/", ".").removesuffix(".py"), name or module


def render(suite: Suite) -> str:
    s = ET.Element("testsuite", name=xml_safe(suite.name))
    if suite.properties:
        props = ET.SubElement(s, "properties")
        for k, v in suite.properties.items():
            ET.SubElement(props, "property", name=xml_safe(k), value=xml_safe(v))
    for c in suite.cases:
        attrs = {"classname": xml_safe(c.classname), "name": xml_safe(c.name)}
        if c.time:
            attrs["time"] = c.time
        el = ET.SubElement(s, "testcase", attrs)
        if c.kind in (Kind.FAILURE, Kind.ERROR):
            ET.SubElement(el, c.kind.value, type=xml_safe(c.type), message=xml_safe(c.message)).text = xml_safe(c.text)
        elif c.kind is Kind.SKIPPED:
            sk = ET.SubElement(el, "skipped")
            if c.message:
                sk.set("message", xml_safe(c.message))
        if c.system_out:
            ET.SubElement(el, "system-out").text = xml_safe(c.system_out)
    s.set("tests", str(len(suite.cases)))
    s.set("failures", str(sum(c.kind is Kind.FAILURE for c in suite.cases)))
    s.set("errors", str(sum(c.kind is Kind.ERROR for c in suite.cases)))
    s.set("skipped", str(sum(c.kind is Kind.SKIPPED for c in suite.cases)))
    if suite.time:
        s.set("time", suite.time)
    root = ET.Element("testsuites")
    root.append(s)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
