"""The DS-STAR agent: one module per role (prompts/ holds their templates), the loop, and its state."""

from dsstar_lake.agent.state import AgentState, Answer, ContextEntry

__all__ = ["AgentState", "Answer", "ContextEntry"]
