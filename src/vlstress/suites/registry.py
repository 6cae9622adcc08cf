"""The suites of the workflow, as data: one line each, the module that declares it (a `SUITE`).

Adding a suite is one package under `vlstress/suites/` plus one line here. Order is the
order of stages in dvc.yaml and of tasks in the report (original retrieval first).
"""

from __future__ import annotations

import importlib
from functools import cache

from vlstress.workflow.spec import Suite

MODULES = (
    "vlstress.suites.retrieval.suite",
    "vlstress.suites.rococo_text.suite",
    "vlstress.suites.rococo_image.suite",
    "vlstress.suites.zeroshot.suite",
    "vlstress.suites.corruptions.suite",
    "vlstress.suites.corruptions_3d.suite",
    "vlstress.suites.typographic.suite",
    "vlstress.suites.adversarial.suite",
    "vlstress.suites.calibration.suite",
    "vlstress.suites.ood.suite",
    "vlstress.suites.finetune.suite",
    "vlstress.suites.accuracy_vs_recall.suite",
    "vlstress.suites.shape_bias.suite",
    "vlstress.suites.visual_factors.suite",
    "vlstress.suites.prompts.suite",
    "vlstress.suites.stability.suite",
    "vlstress.suites.video.suite",
    "vlstress.suites.stylized.suite",
    "vlstress.suites.overlap.suite",
    "vlstress.suites.assistant.suite",
    "vlstress.suites.correspondence.suite",
    "vlstress.suites.findings.suite",
)


@cache
def suites() -> tuple[Suite, ...]:
    found = tuple(importlib.import_module(module).SUITE for module in MODULES)
    names = [suite.name for suite in found]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"suite name(s) declared twice in the registry: {', '.join(repeated)}")
    return found


def by_name() -> dict[str, Suite]:
    return {suite.name: suite for suite in suites()}
