"""``sonnx conform``: rewrite a model into the SONNX profile where no output bit changes
(rewrite.py), check bit identity through onnxruntime (bitcheck.py), report what is left (api.py)."""
from .api import SCHEMA, conform
from .rewrite import ConformError

__all__ = ["SCHEMA", "ConformError", "conform"]
