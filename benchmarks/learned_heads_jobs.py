"""When do chapter 30's learned heads settle on their jobs? For every start of the page's table
(``SURVEY_SEEDS``) and both layers, train the full 1000 steps with the held-out checkpoints
every 50 steps and print the last checkpoint at which any head's job changed, the jobs after
``SURVEY_STEPS`` steps and at the end. The page asks the starts after ``SURVEY_STEPS`` steps;
this says whether that is late enough. About 1-2 minutes on 2 cores.

    .venv/bin/python benchmarks/learned_heads_jobs.py
"""

from __future__ import annotations

from llm_from_scratch.ch30 import learned_heads as lh


def main() -> int:
    latest = 0
    for seed in lh.SURVEY_SEEDS:
        for heads in (2, 1):
            run = lh.learn(heads=heads, seed=seed, every=lh.EVERY)
            steps, jobs = run.checkpoints.tolist(), run.held_out_jobs
            changed = max((steps[i] for i in range(1, len(jobs)) if jobs[i] != jobs[i - 1]), default=0)
            latest = max(latest, changed)
            print(f"start {seed}, h = {heads}: last change at step {changed}; after {lh.SURVEY_STEPS} steps "
                  f"{', '.join(jobs[steps.index(lh.SURVEY_STEPS)])}; at the end {', '.join(jobs[-1])}",
                  flush=True)
    print(f"latest change over all starts: step {latest} (checkpoints every {lh.EVERY} steps)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
