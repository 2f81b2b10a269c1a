"""The configuration identity of sonnx's verification tools, for tool qualification (DO-330,
TQL-5): which tool versions judged, and which rule set and requirement registry they applied.

``configuration()`` is printed in every report that judges (``sonnx validate --format json``:
``tool.configuration``; ``sonnx trace``: ``inputs.configuration``) and recorded in the evidence
bundle's qualification kit (tools/sonnx_dev/qualification.py), so a report can be matched to the
qualified configuration by comparing hashes.

The rule set is the source of the code that decides a verdict: the validator (sonnx/validate),
each operator's record and constraint functions (sonnx/ops), the profile (profile.py) and the
trace judge (sonnx/trace); each is hashed file by file, from the files present (nobody keeps the
list). The registry is the requirement data files, in the order sonnx.requirements reads them.
"""
from __future__ import annotations

import hashlib
import platform
from importlib import resources

# the parts of the package whose code decides verdicts: {name: (folders, files)} inside sonnx/
RULE_SETS = {
    "validate": (("validate", "ops"), ("profile.py", "errors.py", "dtypes.py", "model_files.py")),
    "trace": (("trace",), ("requirements.py",)),
}


def _files(folders, files) -> list:
    pkg = resources.files("sonnx")
    out = []
    for folder in folders:
        out += _walk(pkg.joinpath(folder), folder)
    out += [(name, pkg.joinpath(name)) for name in files if pkg.joinpath(name).is_file()]
    return sorted(out, key=lambda p: p[0])


def _walk(node, rel: str) -> list:
    out = []
    for child in node.iterdir():
        name = f"{rel}/{child.name}"
        if child.is_dir():
            if child.name != "__pycache__":
                out += _walk(child, name)
        elif child.name.endswith(".py"):
            out.append((name, child))
    return out


def digest(items) -> str:
    """sha256 over (name, bytes) pairs, each name and length framed so that no two different
    sets of files give the same stream."""
    h = hashlib.sha256()
    for name, data in items:
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def rules_sha256(kind: str) -> str:
    folders, files = RULE_SETS[kind]
    return digest((name, f.read_bytes()) for name, f in _files(folders, files))


def registry_sha256(root=None) -> str:
    """Of the installed package's requirement data, or of the checkout ``root``'s."""
    from . import requirements
    return digest((rel, text.encode("utf-8")) for rel, text in requirements.texts(root))


def configuration(root=None) -> dict:
    """The configuration identity: versions, and the hashes of the rule sets and of the
    registry (the installed package's, or that of the checkout ``root`` a trace judges)."""
    import onnx

    import sonnx
    return {"sonnx": sonnx.__version__, "python": platform.python_version(), "onnx": onnx.__version__,
            **{f"{kind}_rules_sha256": rules_sha256(kind) for kind in RULE_SETS},
            "requirements_sha256": registry_sha256(root)}
