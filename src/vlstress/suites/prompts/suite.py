"""Prompt templates: how zero-shot accuracy, calibration and OOD detection change with the number
of templates, and AutoCLIP's per-image template weighting beside plain averaging.

One text pass per model: the per-template text embeddings of every test set are a set of the
model's classifier job (group `classifiers`, `vlstress.suites.prompts.sets`); the ablation and
AutoCLIP read them and the image embeddings already computed.
"""

from vlstress.embedding.kinds import IMAGE_TEXT_KINDS
from vlstress.report.display import Headline, Task
from vlstress.suites.prompts import lists
from vlstress.suites.prompts.resampling import gain_resampling
from vlstress.workflow.spec import PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

SUITE = Suite(
    "prompts",
    "prompt-count ablation (top-1, ECE, OOD AUROC vs number of templates) and AutoCLIP template "
    "weighting beside averaging",
    needs=("prompts",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "prompt_ablation",
            "vlstress prompt-ablation {params_files} --model {model}"
            " --counts {p.prompts.counts} --seeds {p.prompts.seeds} --seed {p.prompts.seed}"
            " --bins {p.prompts.bins} --out {out.records}",
            input_lists={"sets": "prompt_ablation_sets"},
            outputs={
                "records": small("results/metrics/{model}/prompt-ablation.json", record=True),
                "subsets": small("results/metrics/{model}/prompt-ablation.json.json"),
                "outcomes": outcomes_of("results/metrics/{model}/prompt-ablation.json"),
            },
            axes=("model",),
            model_kinds=IMAGE_TEXT_KINDS,
            suite="prompts",
            doc=(
                "top-1, ECE and MCM AUROC of classifiers averaging 1, 2, 4, ... templates, seeded "
                "subsets, from the per-template text embeddings"
            ),
        ),
        Stage(
            "autoclip",
            "vlstress autoclip {params_files} --model {model}"
            " --evaluations-from {providers.evaluations} --beta {p.prompts.beta}"
            " --out {out.records}",
            input_lists={"sets": "zeroshot_sets"},
            outputs={
                "records": small("results/metrics/{model}/autoclip.json", record=True),
                "outcomes": outcomes_of("results/metrics/{model}/autoclip.json"),
            },
            axes=("model",),
            model_kinds=IMAGE_TEXT_KINDS,
            suite="prompts",
            doc="AutoCLIP's per-image template weights beside averaging, on every zero-shot set",
        ),
        figures_stage(
            "prompts",
            "vlstress.suites.prompts.figures",
            {"prompt_count": (), "autoclip_gain": ()},
            "Figures",
            intervals=True,
        ),
        tables_stage(
            "prompts",
            "vlstress.suites.prompts.table",
            {
                "md": small("results/tables/prompts.md", caption="tables", category="Tables"),
                "tex": small("results/tables/prompts.tex", caption="tables", category="Tables"),
            },
            intervals=True,
        ),
    ),
    commands={
        "prompt-ablation": (
            "vlstress.suites.prompts.commands.prompt_ablation",
            "zero-shot top-1, ECE and OOD AUROC of one model against the number of templates",
        ),
        "autoclip": (
            "vlstress.suites.prompts.commands.autoclip",
            "AutoCLIP template weighting beside averaging on every zero-shot set of one model",
        ),
    },
    params="vlstress.suites.prompts.params",
    pricing="vlstress.suites.prompts.pricing",
    lists={
        "prompt_ablation_sets": PathList(
            lists.ablation_paths, lists.ablation_folders, lists.ablation_params
        ),
    },
    providers={"classifiers": "vlstress.suites.prompts.sets"},
    tasks={
        "prompt_count": Task(
            "zero-shot classification vs number of prompt templates",
            (),
            noun="test sets and template counts",
            headlines=(Headline("top1", "top-1 (%)", proportion=True),),
        ),
        "prompt_count_ood": Task(
            "OOD detection (MCM) vs number of prompt templates",
            (),
            noun="OOD sets and template counts",
        ),
        "autoclip": Task(
            "AutoCLIP template weighting vs averaging",
            (),
            noun="sets",
            headlines=(
                # a paired difference on the same images: a bootstrap of both outcomes together
                Headline("gain", "AutoCLIP's gain over averaging (pp)", resampling=gain_resampling),
            ),
        ),
    },
)
