"""ONNX model -> findings against the SONNX profile.

Pipeline (one small module each): reader (size checks, parse without weights, ONNX checker, one
strict shape inference), walker (graphs, subgraphs and model-local functions, node by node),
rules (each operator's own constraint function), formats (text, JSON, SARIF), cli.
"""
from .api import validate
from .report import ONNX_CHECKER, ONNX_INFERENCE, ONNX_IR, Finding, Report

__all__ = ["validate", "Report", "Finding", "ONNX_CHECKER", "ONNX_INFERENCE", "ONNX_IR"]
