"""Simulated LLM token counts (the demo has no LLM; every count here is synthetic).

Per development step, following how the real agents use an LLM:

- prompt tokens = calls x (task description + agent instructions + the agent's memory
  (journal / tree summary, growing with the steps) + the current script), where code and text
  are counted as characters / 4;
- completion tokens = the code the agent writes (tree agents rewrite the whole script; linear
  coding agents write a diff of the changed lines) + reasoning text, scaled by the simulated
  LLM's verbosity;
- ``calls`` is the agent's number of LLM calls per step (a coding agent's tool loop resends its
  context many times; AIDE and AI Scientist make a few calls per node).

Every draw uses the run's seeded generator, so counts are reproducible. ``run.json`` marks them
``simulated: true``.
"""

from __future__ import annotations

import numpy as np

TASK_PROMPT_TOKENS = 1800
INSTRUCTION_TOKENS = {"autoresearch": 900, "codex": 500, "aide": 700, "aiscientist": 1200}
CALLS_PER_STEP = {"autoresearch": (8, 18), "codex": (10, 24), "aide": (2, 3), "aiscientist": (3, 5)}
VERBOSITY = {"sim-llm-a": 1.0, "sim-llm-b": 1.45, "sim-llm-c": 0.8}
REWRITES_WHOLE_SCRIPT = {"aide", "aiscientist"}


def step_tokens(
    agent: str,
    llm: str,
    *,
    script_chars: int,
    memory_chars: int,
    changed_lines: int,
    rng: np.random.Generator,
) -> tuple[int, int]:
    """``(prompt, completion)`` tokens of one step."""
    lo, hi = CALLS_PER_STEP[agent]
    calls = int(rng.integers(lo, hi + 1))
    context = TASK_PROMPT_TOKENS + INSTRUCTION_TOKENS[agent] + memory_chars // 4 + script_chars // 4
    prompt = calls * context
    code = script_chars // 4 if agent in REWRITES_WHOLE_SCRIPT else max(changed_lines, 3) * 14
    reasoning = float(rng.uniform(300, 1500)) * VERBOSITY.get(llm, 1.0) * calls**0.5
    completion = int(code + reasoning)
    return int(prompt), completion
