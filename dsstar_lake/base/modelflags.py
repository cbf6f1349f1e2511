"""The model flags (--llm, --model, --model-for, budgets, cache) declared once: the one table that the CLI's options,
their help, LlmFlags and the settings overrides are all made from.

It imports only modelnames, so the CLI builds its options without loading the LLM layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsstar_lake.base.modelnames import PROVIDERS, ROLES

# The heading these flags get in `dslake COMMAND --help`, apart from the command's own options.
SECTION = "Model options"


@dataclass(frozen=True)
class ModelFlag:
    """One model flag: its LlmFlags field, how it is spelled, the setting it overrides, and its help."""

    name: str  # the LlmFlags field (and the Python API's keyword)
    flag: str  # as typed on the command line
    setting: str  # the dotted setting it overrides
    help: str
    kind: str = "text"  # text | folder | file | count | cost | choice
    choices: tuple[str, ...] = ()
    unadvertised: tuple[str, ...] = ()  # choices accepted but kept off the help (the scripted test provider)
    hidden: bool = False

    @property
    def dest(self) -> str:
        """Return the name click gives the value (prefixed, so it never meets a command's own parameter)."""
        return f"llm_{self.name}"


MODEL_FLAGS: tuple[ModelFlag, ...] = (
    ModelFlag("provider", "--llm", "llm.provider", "Model provider (default from settings).", "choice",
              choices=tuple(p for p in PROVIDERS if p != "scripted"), unadvertised=("scripted",)),
    # --model also replaces per-role models that came from config files (llm/registry.py, llm_flag_overrides).
    ModelFlag("model", "--model", "llm.model", "Model for every role."),
    ModelFlag("base_url", "--base-url", "llm.base_url", "OpenAI-compatible endpoint, or a Gemini proxy."),
    ModelFlag("manual_dir", "--manual-dir", "llm.manual_dir", "Prompt and answer folder for --llm manual.",
              "folder"),
    # scripted (JSONL rules, for tests) is accepted but not advertised: README, "Testing without a model".
    ModelFlag("scripted_file", "--scripted-file", "llm.scripted_file", "JSONL rules for the scripted provider.",
              "file", hidden=True),
    ModelFlag("cache", "--cache", "llm.cache", "LLM response cache mode.", "choice",
              choices=("off", "record", "replay")),
    ModelFlag("max_llm_calls", "--max-llm-calls", "llm.max_llm_calls", "Finalize after this many calls.",
              "count"),
    ModelFlag("max_cost", "--max-cost", "llm.max_cost", "Finalize past this cost (USD).", "cost"),
)

# Per-role models: one repeatable flag in the help; the older --model-ROLE spellings still work, unlisted.
ROLE_FLAG = "--model-for"
ROLE_FLAG_HELP = f"Model for one role, as ROLE=MODEL; repeatable. Roles: {', '.join(ROLES)}."
ROLE_SETTING = "llm.models"


def role_flag(role: str) -> str:
    """Return the older per-role spelling of a role's flag (--model-coder)."""
    return f"--model-{role}"


def parse_role_model(text: str) -> tuple[str, str]:
    """Read one --model-for value, ROLE=MODEL, into (role, model); raise ValueError with what is wrong."""
    role, sep, model = text.partition("=")
    role, model = role.strip().lower(), model.strip()
    if not sep or not role or not model:
        raise ValueError(f"expected ROLE=MODEL (e.g. coder=gemini-2.5-flash), not {text!r}")
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    return role, model
