"""The JUnit XML channel: alerts as test cases, for CI systems that show JUnit reports.

Each alert event sent through one channel object becomes a ``<testcase>`` (classname
``evalplat.<config>.<test set>``, name ``<metric>``); a regression being opened is a
``<failure type="regression">`` (``needs_judgments`` or ``operational`` for those kinds) with
the alert's text, a resolution or a test message passes
with the text in ``<system-out>``. The file holds the cases sent by this channel object — one
nightly invocation — and is rewritten whole (to a temporary file, then renamed) after every
message, so a reader never sees half a file and the file does not grow across nights.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from evalplat.alerts.base import Channel, ChannelKind, Param
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice

PATH = Param("path", (str,), "file to write (relative to the project file)", required=True)


_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry."""
    return _XML_FORBIDDEN.sub("", text)


def clean_tree(root: ET.Element) -> ET.Element:
    """Drop XML-forbidden characters from every text, tail and attribute under ``root``."""
    for element in root.iter():
        if element.text:
            element.text = xml_safe(element.text)
        if element.tail:
            element.tail = xml_safe(element.tail)
        for key, value in element.attrib.items():
            element.attrib[key] = xml_safe(value)
    return root


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def render(messages: list[AlertMessage], suite: str) -> bytes:
    failures = sum(1 for m in messages if m.event == "opened")
    root = ET.Element("testsuites", name=suite, tests=str(len(messages)), failures=str(failures))
    testsuite = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(messages)), failures=str(failures)
    )
    for message in messages:
        case = ET.SubElement(
            testsuite,
            "testcase",
            classname=f"evalplat.{message.config}.{message.test_set}",
            name=message.metric,
        )
        if message.event == "opened":
            failure = ET.SubElement(case, "failure", type=message.kind, message=message.title())
            failure.text = message.text()
        else:
            ET.SubElement(case, "system-out").text = message.text()
    ET.indent(clean_tree(root))
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


class JUnitChannel(Channel):
    kind = "junit"

    def __init__(self, name: str, params: dict[str, Any]):
        super().__init__(name, params)
        self.sent: list[AlertMessage] = []

    def send(self, notice: Notice) -> None:
        path = Path(self.expanded("path"))
        write_atomically(path, render([*self.sent, *notice.entries], self.params["suite"]))
        self.sent += notice.entries


KIND = ChannelKind(
    name="junit",
    description="write the alerts of a nightly run as a JUnit XML file",
    params=(PATH, Param("suite", (str,), "test suite name", default="evalplat alerts")),
    factory=JUnitChannel,
)
