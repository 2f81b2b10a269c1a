"""The trace matrix as one ReqIF 1.2 file (OMG's exchange format: DOORS, Polarion, codebeamer and
StrictDoc import it), in StrictDoc's p01 conventions so that `strictdoc convert` keeps every UID.

Content:
- one specification, "SONNX profile", with a chapter per requirement prefix (PROF, MUL, ...) and
  the chapters "Implementation" and "Verification" (proof goals, tests, CrossHair harnesses);
- a requirement is a SPEC-OBJECT of type REQUIREMENT: ``ReqIF.ForeignID`` (the ID), ``ReqIF.Name``
  (title), ``ReqIF.Text`` (statement), ``STATUS`` (sonnx's state: ok, partial, suspect, defect),
  ``RATIONALE`` (its source documents), ``NOTES`` (sonnx's defects and gaps, one per line) and
  ``WG`` (its working-group cross-references: relation, document#tag, reason; one per line);
- a code site, goal, test or harness is a SPEC-OBJECT of type REQUIREMENT too (StrictDoc imports
  one grammar), its ForeignID the same tag as in the LOBSTER export (``why3 PATH:GOAL``,
  ``pytest NODEID``, ...), its STATUS the result (ok, fail), its NOTES the failure;
- each link is a SPEC-RELATION of type ``Parent`` from the evidence item to the requirement (the
  direction StrictDoc reads as "child of"), so a tool that imports the file shows each
  requirement's verification and implementation as its children.

Identifiers are derived from the IDs and tags (never random), so two exports of the same matrix
differ only in their creation time. Written with the standard library; no ReqIF library imported.
"""
from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from . import lobster
from .matrix import Matrix, wg_text

NS = "http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"
FILE = "sonnx.reqif"
STRING1, STRINGN = "SONNX-DT-SINGLE-LINE", "SONNX-DT-MULTI-LINE"
SECTION_TYPE, REQ_TYPE, SPEC_TYPE, PARENT = ("SONNX-SECTION", "SONNX-REQUIREMENT", "SONNX-SPECIFICATION-TYPE",
                                             "SONNX-RELATION-PARENT")
SECTION_ATTRS = (("ReqIF.ChapterName", STRING1),)
REQ_ATTRS = (("ReqIF.ForeignID", STRING1), ("STATUS", STRING1), ("ReqIF.Name", STRING1),
             ("ReqIF.Text", STRINGN), ("RATIONALE", STRINGN), ("NOTES", STRINGN),
             ("WG", STRINGN))


def _ident(kind: str, key: str) -> str:
    # a ReqIF IDENTIFIER is an xsd:ID (a letter first, no spaces): a readable prefix and a hash
    return f"SONNX-{kind}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:24]}"


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    e = ET.SubElement(parent, tag, {k.replace("_", "-"): v for k, v in attrs.items()})
    if text is not None:
        e.text = text
    return e


def _attr_id(type_id: str, name: str) -> str:
    return f"{type_id}-{name.replace('.', '-')}"


def _object_type(types: ET.Element, type_id: str, name: str, attrs, now: str) -> None:
    t = _sub(types, "SPEC-OBJECT-TYPE", IDENTIFIER=type_id, LAST_CHANGE=now, LONG_NAME=name)
    sa = _sub(t, "SPEC-ATTRIBUTES")
    for attr, dt in attrs:
        d = _sub(sa, "ATTRIBUTE-DEFINITION-STRING", IDENTIFIER=_attr_id(type_id, attr), LAST_CHANGE=now,
                 LONG_NAME=attr)
        _sub(_sub(d, "TYPE"), "DATATYPE-DEFINITION-STRING-REF", dt)


def _object(objects: ET.Element, ident: str, type_id: str, values: dict[str, str], now: str) -> None:
    o = _sub(objects, "SPEC-OBJECT", IDENTIFIER=ident, LAST_CHANGE=now)
    vs = _sub(o, "VALUES")
    for attr, value in values.items():
        if value:
            v = _sub(vs, "ATTRIBUTE-VALUE-STRING", THE_VALUE=value)
            _sub(_sub(v, "DEFINITION"), "ATTRIBUTE-DEFINITION-STRING-REF", _attr_id(type_id, attr))
    _sub(_sub(o, "TYPE"), "SPEC-OBJECT-TYPE-REF", type_id)


def _hierarchy(parent: ET.Element, obj: str, now: str) -> ET.Element:
    h = _sub(parent, "SPEC-HIERARCHY", IDENTIFIER=f"H-{obj}", LAST_CHANGE=now)
    _sub(_sub(h, "OBJECT"), "SPEC-OBJECT-REF", obj)
    return h


def _chapter(children: ET.Element, objects: ET.Element, name: str, now: str) -> ET.Element:
    ident = _ident("SECTION", name)
    _object(objects, ident, SECTION_TYPE, {"ReqIF.ChapterName": name}, now)
    return _sub(_hierarchy(children, ident, now), "CHILDREN")


def _evidence_items(m: Matrix) -> list[tuple[str, list[dict]]]:
    """(chapter, items) of the code sites and results, as LOBSTER's export names and judges them."""
    acts = lobster.activities(m)
    return [("Implementation", lobster.code_items(m)),
            *((f"Verification: {level}", [a for a in acts if a["framework"] == fw])
              for level, fw in lobster.ACTIVITY_LEVELS.items())]


def render(m: Matrix, now: datetime | None = None) -> str:
    """The ReqIF document of matrix ``m``."""
    now_s = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    root = ET.Element("REQ-IF", {"xmlns": NS})
    header = _sub(_sub(root, "THE-HEADER"), "REQ-IF-HEADER", IDENTIFIER="SONNX-HEADER")
    _sub(header, "CREATION-TIME", now_s)
    _sub(header, "REQ-IF-TOOL-ID", "sonnx trace")
    _sub(header, "REQ-IF-VERSION", "1.0")
    _sub(header, "SOURCE-TOOL-ID", "sonnx")
    _sub(header, "TITLE", "SONNX profile: requirements, implementation and verification (sonnx trace)")
    content = _sub(_sub(root, "CORE-CONTENT"), "REQ-IF-CONTENT")
    dts = _sub(content, "DATATYPES")
    for dt in (STRING1, STRINGN):
        _sub(dts, "DATATYPE-DEFINITION-STRING", IDENTIFIER=dt, LAST_CHANGE=now_s, MAX_LENGTH="100000")
    types = _sub(content, "SPEC-TYPES")
    _sub(types, "SPECIFICATION-TYPE", IDENTIFIER=SPEC_TYPE, LAST_CHANGE=now_s, LONG_NAME="SPECIFICATION")
    _object_type(types, SECTION_TYPE, "SECTION", SECTION_ATTRS, now_s)
    _object_type(types, REQ_TYPE, "REQUIREMENT", REQ_ATTRS, now_s)
    _sub(types, "SPEC-RELATION-TYPE", IDENTIFIER=PARENT, LAST_CHANGE=now_s, LONG_NAME="Parent")
    objects = _sub(content, "SPEC-OBJECTS")
    relations = _sub(content, "SPEC-RELATIONS")
    spec = _sub(_sub(content, "SPECIFICATIONS"), "SPECIFICATION", IDENTIFIER="SONNX-SPECIFICATION",
                LAST_CHANGE=now_s, LONG_NAME="SONNX profile")
    _sub(_sub(spec, "TYPE"), "SPECIFICATION-TYPE-REF", SPEC_TYPE)
    top = _sub(spec, "CHILDREN")

    chapters: dict[str, ET.Element] = {}
    for r in m.rows:
        prefix = r.id.rsplit("-R", 1)[0]
        if prefix not in chapters:
            chapters[prefix] = _chapter(top, objects, prefix, now_s)
        notes = [f"{d.kind}: {d.detail}" for d in r.defects]
        notes += [f"partial: not proved as stated: {c['part']} (reviewed gap: {c['gap']})"
                  + (f"\n{c['gap_text']}" if c.get("gap_text") else "") for c in r.claims if c["gap"]]
        notes += [f"justified: no {j['kind']} link: {j['justification']}" for j in r.justified]
        ident = _ident("REQ", r.id)
        _object(objects, ident, REQ_TYPE, {"ReqIF.ForeignID": r.id, "STATUS": r.state, "ReqIF.Name": r.title,
                                           "ReqIF.Text": r.statement, "RATIONALE": r.source,
                                           "NOTES": "\n".join(notes),
                                           "WG": "\n".join(wg_text(w) for w in r.wg)}, now_s)
        _hierarchy(chapters[prefix], ident, now_s)

    for chapter, items in _evidence_items(m):
        children = _chapter(top, objects, chapter, now_s)
        for it in items:
            ident = _ident("ITEM", it["tag"])
            status = it.get("status") or ""
            _object(objects, ident, REQ_TYPE, {"ReqIF.ForeignID": it["tag"], "STATUS": status,
                                               "ReqIF.Name": it["name"], "ReqIF.Text": it.get("text", it["tag"]),
                                               "NOTES": "\n".join(it["messages"])}, now_s)
            _hierarchy(children, ident, now_s)
            for ref in it["refs"]:
                rid = ref.split(" ", 1)[1]
                rel = _sub(relations, "SPEC-RELATION", IDENTIFIER=_ident("REL", f"{it['tag']}->{rid}"),
                           LAST_CHANGE=now_s)
                _sub(_sub(rel, "TYPE"), "SPEC-RELATION-TYPE-REF", PARENT)
                _sub(_sub(rel, "SOURCE"), "SPEC-OBJECT-REF", ident)
                _sub(_sub(rel, "TARGET"), "SPEC-OBJECT-REF", _ident("REQ", rid))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
