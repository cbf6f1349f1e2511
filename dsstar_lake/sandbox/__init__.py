"""Run untrusted, model-written scripts: bubblewrap when it works here, else a limited subprocess."""

from dsstar_lake.sandbox.core import Sandbox
from dsstar_lake.sandbox.result import ExecResult

__all__ = ["ExecResult", "Sandbox"]
