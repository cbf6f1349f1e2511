"""The names of the model providers and of the agent's roles, defined once (the CLI and the LLM layer import them).

It imports nothing, so the CLI can build its --llm and --model-ROLE options without loading the LLM layer.
"""

# The providers llm.provider can name (llm/registry.py builds them).
PROVIDERS = ("gemini", "openai", "manual", "scripted")
# The providers that take an API key `dslake keys` can keep (llm/keys.py).
KEYED_PROVIDERS = ("gemini", "openai")
# The agent's roles, in pipeline order; `dslake models` lists a model for each.
ROLES = (
    "analyzer",
    "summarizer",
    "selector",
    "planner",
    "coder",
    "verifier",
    "router",
    "debugger",
    "finalyzer",
    "chooser",
    "subquestion",
    "writer",
)
