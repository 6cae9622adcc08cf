"""Zero-shot classification under adversarial attacks in pixel space (torchattacks): robust accuracy
against eps."""

from vlstress.report.display import Headline, Task
from vlstress.workflow.paths import CARD, CLASSIFIER, CLASSIFIERS, RUN_FLAGS, of
from vlstress.workflow.spec import Axis, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

SUITE = Suite(
    "adversarial",
    (
        "zero-shot classification under adversarial attacks in pixel space (torchattacks): robust "
        "accuracy against eps"
    ),
    needs=("adversarial",),
    requires=("zeroshot",),
    axes=(Axis("attack", "adversarial.attacks", r"[a-z0-9][a-z0-9_]*", named="name"),),
    stages=(
        Stage(
            "attack",
            "vlstress attack --testset {in.testset} --classifier {in.classifiers}/"
            + of(CLASSIFIER, "p.adversarial.testset")
            + " --model-card {in.card} "
            + RUN_FLAGS
            + " --attack {attack} --kind {item.attack.kind} --norm {item.attack.norm}"
            " --eps {item.attack.eps} --steps {item.attack.steps} --alpha {item.attack.alpha}"
            " --restarts {item.attack.restarts} --extra {item.attack.extra}"
            " --n-images {p.adversarial.n_images} --attack-seed {p.adversarial.seed}"
            " --out {out.records}",
            inputs={
                "testset": "data/testsets/{p.adversarial.testset}",
                "classifiers": CLASSIFIERS,
                "card": CARD,
            },
            outputs={
                "records": small("results/metrics/{model}/adversarial-{attack}.json", record=True),
                "per_image": small("results/metrics/{model}/adversarial-{attack}.json.json"),
                "outcomes": outcomes_of("results/metrics/{model}/adversarial-{attack}.json"),
            },
            axes=("model", "attack"),
            suite="adversarial",
            gpu=True,
            doc=(
                "one attack at every eps of its list on a seeded sample of the test set (one "
                "record per eps)"
            ),
        ),
        figures_stage(
            "adversarial",
            "vlstress.suites.adversarial.figures",
            {"adversarial_eps": (), "adversarial_queries": ()},
            "Figures",
        ),
        tables_stage(
            "adversarial",
            "vlstress.suites.adversarial.table",
            {
                "md": small("results/tables/adversarial.md", caption="tables", category="Tables"),
                "tex": small("results/tables/adversarial.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "attack": (
            "vlstress.suites.adversarial.commands.attack",
            "one adversarial attack (torchattacks) on a model's zero-shot classifier, at each eps",
        ),
    },
    params="vlstress.suites.adversarial.params",
    pricing="vlstress.suites.adversarial.pricing",
    tasks={
        "adversarial": Task(
            "zero-shot classification under adversarial attacks",
            (),
            noun="attacks",
            headlines=(
                # paired on the same images (McNemar); attack success is not: it counts among
                # each model's own clean-correct images
                Headline("robust_top1", "robust top-1 (%)", proportion=True, item_column="correct"),
                Headline("attack_success", "attack success (%)", False, proportion=True),
            ),
        )
    },
)
